#!/bin/sh
# cli.sh BLKC — the blkc command line: exit codes, messages, hostile files.
blkc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect STATUS PATTERN -- ARGS...: run blkc ARGS, check the exit status and
# that stderr+stdout contains PATTERN (a fixed string; '' = anything).
expect() {
  want=$1; pat=$2; shift 3
  "$blkc" "$@" > "$tmp/out" 2>&1; rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL: blkc $*: exit $rc, want $want"; cat "$tmp/out"; fail=1
  elif [ -n "$pat" ] && ! grep -qF -- "$pat" "$tmp/out"; then
    echo "FAIL: blkc $*: output lacks '$pat'"; cat "$tmp/out"; fail=1
  fi
}

printf 'kernel k(x: *f32) { store(x, 1.0); }\n' > "$tmp/ok.blk"
: > "$tmp/empty.blk"
printf 'kernel k() {\0}\n' > "$tmp/nul.blk"
printf 'kernel \377\376 k() {}\n' > "$tmp/utf8.blk"
printf 'kernel k(const B: i32) { }\n' > "$tmp/needs_const.blk"
i=0; : > "$tmp/deep.blk"; printf 'kernel k(x: *f32) { store(x, ' >> "$tmp/deep.blk"
while [ $i -lt 3000 ]; do printf '(' >> "$tmp/deep.blk"; i=$((i + 1)); done
printf '1.0\n' >> "$tmp/deep.blk"

expect 0 'usage: blkc' -- --help
expect 0 'blkc ' -- --version
expect 2 'no input file' --
expect 2 "unknown option '--bogus'" -- --bogus "$tmp/ok.blk"
expect 2 'more than one input file' -- "$tmp/ok.blk" "$tmp/ok.blk"
expect 2 'expected NAME=VALUE' -- -D FOO "$tmp/ok.blk"
expect 2 "not a number, bool or name" -- -D B=12x "$tmp/needs_const.blk"
expect 1 "const parameter 'B' is declared i32, got a string" -- -D B=abc "$tmp/needs_const.blk"
expect 2 "unknown --emit kind" -- --emit=nonsense "$tmp/ok.blk"
expect 2 "unknown pass 'nopass'" -- --emit=ir-after=nopass "$tmp/ok.blk"
expect 1 "cannot read '$tmp/missing.blk'" -- "$tmp/missing.blk"
expect 1 'is a directory' -- "$tmp"
expect 0 '' -- --emit=ir "$tmp/empty.blk"
expect 0 'kernel @k' -- --emit=ir "$tmp/ok.blk"
expect 0 '' -- --emit=ir -o "$tmp/ok.ir" "$tmp/ok.blk"
grep -q 'kernel @k' "$tmp/ok.ir" || { echo "FAIL: -o did not write the IR"; fail=1; }
expect 1 "cannot write '$tmp/no/such/dir/x.ir'" -- --emit=ir -o "$tmp/no/such/dir/x.ir" "$tmp/ok.blk"
expect 1 'nul.blk:1:13: error:' -- "$tmp/nul.blk"
expect 1 'utf8.blk:1:8: error:' -- "$tmp/utf8.blk"
expect 1 "needs_const.blk:1:16: error:" -- "$tmp/needs_const.blk"
expect 0 'kernel @k' -- -D B=64 "$tmp/needs_const.blk"
expect 1 'nesting too deep' -- "$tmp/deep.blk"
expect 0 "k" -- --emit=tokens "$tmp/ok.blk"
# the GPU backend's size budget: refused quickly with a located error
cat > "$tmp/huge.blk" <<'BLK'
@num_warps(1) kernel k(x: *f32) {
    var v = load(x + arange(0, 1024));
    for i in static_range(4000) { v = v * 1.0001 + 0.5; }
    store(x + arange(0, 1024), v);
}
BLK
expect 1 "huge.blk:3:" -- --emit=ptx "$tmp/huge.blk"
expect 1 "kernel too large for the GPU backend" -- --emit=ptx "$tmp/huge.blk"
# a dot staging too many operand elements per thread through registers
# (reliability F11: LLVM's straight-line strength reduction is quadratic in
# them): a located error, not a compile of minutes
cat > "$tmp/staged.blk" <<'BLK'
@num_warps(2)
kernel e4m3(a: *f8e4m3, bt: *f8e4m3, c: *f32, K: i32, const BM: i32 = 64, const BN: i32 = 512, const BK: i32 = 128) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = arange(0, BN);
    let rk = arange(0, BK);
    var acc = zeros([BM, BN], f32);
    for k in range(0, K, BK) @num_stages(3) {
        acc = dot(load(a + rm[:, None] * K + (k + rk)[None, :]), trans(load(bt + rn[:, None] * K + (k + rk)[None, :])), acc);
    }
    store(c + rm[:, None] * BN + rn[None, :], acc);
}
BLK
expect 1 "staged.blk:8:15: error: dot stages 1152 operand elements per thread through registers (limit 512)" -- --emit=ptx "$tmp/staged.blk"
expect 0 "" -- --emit=ptx -o "$tmp/staged.ptx" -D BN=64 "$tmp/staged.blk"
expect 0 "kernel" -- --emit=ast "$tmp/ok.blk"
# --variant: extra specialised entries; a bad spec is a bad command line (2)
printf '@do_not_specialize(m)\nkernel s(x: *f32, stride: i32, m: i32, f: f32) { store(x + stride, f, m > 0); }\n' > "$tmp/spec.blk"
expect 0 "entry=s__x_eq1_x_x " -- --emit=meta --variant stride=eq1 "$tmp/spec.blk"
expect 0 "spec=x:d16,stride:-,m:-,f:- nospec=m" -- --emit=meta --no-default-variants --variant x=d16 "$tmp/spec.blk"
expect 2 "variant 'strid=eq1': kernel 's' has no runtime parameter 'strid'; did you mean 'stride'?" -- --variant strid=eq1 "$tmp/spec.blk"
expect 2 "variant 'x=eq1': 'x' is a pointer: eq1 is for integer parameters" -- --variant x=eq1 "$tmp/spec.blk"
expect 2 "variant 'f=d16': 'f' is f32: only pointer and integer parameters are specialised" -- --variant f=d16 "$tmp/spec.blk"
expect 2 "variant 'm=d16': 'm' is @do_not_specialize in kernel 's'" -- --variant m=d16 "$tmp/spec.blk"
expect 2 "variant 'stride=d8': unknown code 'd8' for 'stride' (d16, eq1 or -)" -- --variant stride=d8 "$tmp/spec.blk"
expect 2 "variant 't:stride=eq1': no kernel 't' was built" -- --variant t:stride=eq1 "$tmp/spec.blk"
expect 2 "--variant needs SPEC" -- "$tmp/spec.blk" --variant
# nvcc/clang spellings of the target; other targets refused with the list
expect 0 '.target sm_80' -- -arch=sm_80 -o - --emit=ptx "$tmp/ok.blk"
expect 0 '.target sm_90a' -- -arch sm_90a --emit=ptx "$tmp/ok.blk"
expect 0 '.target sm_90' -- --arch=sm_90 --emit=ptx "$tmp/ok.blk"
for a in sm_89 sm_100 sm_120 compute_90; do
  expect 2 "unknown GPU arch '$a' (supported: sm_90a, sm_90, sm_80)" -- -arch=$a "$tmp/ok.blk"
done
# -D for a name no kernel has: an error with the closest name
printf 'kernel k(x: *f32, const BLOCK: i32 = 4) { store(x, 1.0); }\n' > "$tmp/block.blk"
expect 2 "define 'BLOK': no kernel has a const parameter of that name; did you mean 'BLOCK'?" -- -D BLOK=64 "$tmp/block.blk"
expect 2 "define 'ZZZ': no kernel has a const parameter of that name" -- -D ZZZ=1 "$tmp/ok.blk"
expect 0 'kernel @k' -- -D num_warps=8 -D B=4 "$tmp/needs_const.blk"
# '-' reads the source from stdin
"$blkc" - --emit=ir < "$tmp/ok.blk" > "$tmp/out" 2>&1 && grep -q 'kernel @k' "$tmp/out" || { echo "FAIL: blkc - (stdin)"; cat "$tmp/out"; fail=1; }
printf 'kernel k( {\n' | "$blkc" - > "$tmp/out" 2>&1; [ $? = 1 ] && grep -q '^<stdin>:1:' "$tmp/out" || { echo "FAIL: blkc - (stdin diagnostics)"; cat "$tmp/out"; fail=1; }
# --help lists every pass of the pipeline (the same list ir-after= checks)
"$blkc" --emit=ir-after=nopass "$tmp/ok.blk" 2>&1 | sed -n "s/.*(passes: \(.*\))/\1/p" | tr -d ' ' > "$tmp/passes"
"$blkc" --help | sed -n 's/^  sema (before any pass)/sema/p' | tr -d ' ' > "$tmp/help_passes"
[ -s "$tmp/passes" ] && cmp -s "$tmp/passes" "$tmp/help_passes" || { echo "FAIL: --help passes differ: $(cat "$tmp/help_passes") vs $(cat "$tmp/passes")"; fail=1; }
# bash completion from the option table: every option of --help is in it
"$blkc" --completion=bash > "$tmp/compl.bash" || fail=1
for o in -o --emit --arch -arch -D -I --kernel --variant -Werror --no-verify --max-errors; do
  grep -q -- " $o" "$tmp/compl.bash" || { echo "FAIL: completion lacks $o"; fail=1; }
done
if command -v bash >/dev/null; then
  out=$(bash -c ". '$tmp/compl.bash'; COMP_WORDS=(blkc --em); COMP_CWORD=1; _blkc; echo \${COMPREPLY[*]}")
  [ "$out" = "--emit" ] || { echo "FAIL: completing --em gave '$out'"; fail=1; }
  out=$(bash -c ". '$tmp/compl.bash'; COMP_WORDS=(blkc -arch sm_9); COMP_CWORD=2; _blkc; echo \${COMPREPLY[*]}")
  [ "$out" = "sm_90a sm_90" ] || { echo "FAIL: completing -arch sm_9 gave '$out'"; fail=1; }
fi
expect 2 "only 'bash'" -- --completion=zsh
# cubins go through ptxas, never IR text into a .cubin
expect 2 'holds a cubin' -- --emit=ir -o "$tmp/x.cubin" "$tmp/ok.blk"
PTXAS="$tmp/no-ptxas" "$blkc" "$tmp/ok.blk" -o "$tmp/x.cubin" > "$tmp/out" 2>&1
[ $? = 1 ] && grep -q 'needs ptxas' "$tmp/out" && [ ! -e "$tmp/x.cubin" ] || { echo "FAIL: cubin without ptxas"; cat "$tmp/out"; fail=1; }
ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
if [ -n "$ptxas" ]; then
  expect 0 '' -- "$tmp/ok.blk" -arch=sm_80 -o "$tmp/x.cubin"
  [ "$(head -c 4 "$tmp/x.cubin" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "FAIL: x.cubin is not an ELF file"; fail=1; }
  expect 0 '' -- "$tmp/ok.blk" --emit=cubin -o "$tmp/y.bin"
  cmp -s "$tmp/x.cubin" "$tmp/y.bin" && { echo "FAIL: sm_80 and sm_90a cubins are identical"; fail=1; }
else
  echo "cli: no ptxas: cubin output not assembled here"
fi
exit $fail
