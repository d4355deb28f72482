#!/usr/bin/env python3
"""emit_order.py [DIR...] — calls whose order of emitted LLVM instructions is
unspecified C: a call with two or more top-level arguments that each build
instructions (LLVMBuild*, the cg_* helpers, tile_elem ...), e.g.
`LLVMBuildAdd(b, LLVMBuildMul(...), LLVMBuildLShr(...), "")`. C leaves the
order in which the arguments are evaluated open; gcc and clang pick
differently, so the IR (and sometimes the PTX) of a gcc-built blkc differs
from a clang-built one (docs/reliability.md, F7 and F8; found by
tests/tools/compare_builds.sh). The fix is to evaluate the arguments into
locals first. A heuristic over the text (comments and strings removed):
names the file:line of each call; exit 1 when there is one.
Default DIR: compiler/codegen."""
import re,sys,glob
# calls with two or more top-level arguments that each emit LLVM instructions:
# C leaves their order unspecified (gcc and clang differ), so the IR does too
emit=re.compile(r'\b(LLVMBuild(?!Cast\b)\w+|cg_(?!const_|type|lay_info_get|i32type)\w+|tile_elem|tile_addr32|eval_at|wg_row|tile_chunk)\s*\(')
def strip(s):
    s=re.sub(r'//[^\n]*','',s); s=re.sub(r'/\*.*?\*/',lambda m:'\n'*m.group(0).count('\n'),s,flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"','""',s)
found=0
for f in sorted(sum((glob.glob(d + "/*.c") for d in (sys.argv[1:] or ["compiler/codegen"])), [])):
    src=strip(open(f).read())
    for m in re.finditer(r'\b(\w+)\s*\(',src):
        i=m.end(); depth=1; args=[]; cur=''
        j=i
        while j<len(src) and depth:
            c=src[j]
            if c in '([{': depth+=1
            elif c in ')]}': depth-=1
            if depth==1 and c==',': args.append(cur); cur=''
            elif depth: cur+=c
            j+=1
        args.append(cur)
        if m.group(1) in ('if','while','for','switch','return','sizeof'): continue
        n=sum(1 for a in args if emit.search(a) and not a.strip().startswith('(LLVMValueRef[])'))
        if n>=2:
            line=src.count('\n',0,m.start())+1
            print(f"{f}:{line}: {m.group(1)}(... {n} emitting arguments)")
            found += 1
print(f"emit_order: {found} call(s) with arguments whose emission order is unspecified")
sys.exit(1 if found else 0)
