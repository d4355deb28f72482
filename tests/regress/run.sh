#!/bin/sh
# run.sh BLKC FILE — a regression input must be compiled or rejected
# cleanly: `blkc --emit=ir` exits 0 (ok) or 1 (errors in the input); a
# signal (exit > 128), a usage error (2) or a hang (CTest TIMEOUT) fails.
# A line `// REGRESS-EXIT: N` in FILE pins the status to N (for limit holes,
# where "no crash" is not enough); `// REGRESS-EMIT: ptx` compiles through the
# PTX backend instead (every kernel, default consts).
emit=$(sed -n 's|^// REGRESS-EMIT: *\([a-z]*\).*|\1|p' "$2" | head -1)
"$1" --emit="${emit:-ir}" "$2" -o /dev/null 2>/dev/null
rc=$?
want=$(sed -n 's|^// REGRESS-EXIT: *\([0-9]*\).*|\1|p' "$2" | head -1)
if [ -n "$want" ]; then
    [ "$rc" = "$want" ] && exit 0
    echo "regress: blkc --emit=${emit:-ir} $2 exited with status $rc, expected $want" >&2
    exit 1
fi
if [ $rc -le 1 ]; then exit 0; fi
echo "regress: blkc --emit=${emit:-ir} $2 exited with status $rc" >&2
exit 1
