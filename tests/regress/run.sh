#!/bin/sh
# run.sh BLKC FILE — a regression input must be compiled or rejected
# cleanly: `blkc --emit=ir` exits 0 (ok) or 1 (errors in the input); a
# signal (exit > 128), a usage error (2) or a hang (CTest TIMEOUT) fails.
"$1" --emit=ir "$2" -o /dev/null 2>/dev/null
rc=$?
if [ $rc -le 1 ]; then exit 0; fi
echo "regress: blkc --emit=ir $2 exited with status $rc" >&2
exit 1
