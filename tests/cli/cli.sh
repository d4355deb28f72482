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
expect 2 "--variant needs a spec" -- "$tmp/spec.blk" --variant
exit $fail
