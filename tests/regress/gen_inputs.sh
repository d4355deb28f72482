#!/bin/sh
# gen_inputs.sh BLKC DIR — regression inputs too large to keep in git,
# written into DIR and run like the .blk files (run.sh: exit 0 or 1, no
# signal); CTest's TIMEOUT catches hangs.
#
#  many_params.blk   Finding F4 (hang): a kernel with 40000 parameters;
#                    duplicate-parameter check is quadratic (strcmp of every
#                    pair, compiler/sema.c:917 in lower_kernel): 20000 params
#                    3 s, 50000 params 39 s (gcc build). 490 KB.
#  fifo import       Finding F3 (hang): `import` of a FIFO blocks forever in
#                    fopen/fread: read_file (compiler/util.c:136) rejects only
#                    directories, not non-regular files.
set -u
BLKC=$1
DIR=$2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DIR"
fail=0
i=0
{
    printf 'kernel k('
    while [ $i -lt 40000 ]; do printf 'p%d: i32, ' $i; i=$((i + 1)); done
    printf 'q: i32) { }\n'
} > "$DIR/many_params.blk"
timeout 10 sh "$HERE/run.sh" "$BLKC" "$DIR/many_params.blk" || { echo "FAIL many_params.blk (F4)"; fail=1; }

rm -f "$DIR/fifo.blk"
if mkfifo "$DIR/fifo.blk" 2>/dev/null; then
    printf 'import "fifo.blk";\nkernel k(out: *f32) { store(out, 1.0); }\n' > "$DIR/fifo_import.blk"
    timeout 10 sh "$HERE/run.sh" "$BLKC" "$DIR/fifo_import.blk" || { echo "FAIL fifo_import.blk (F3)"; fail=1; }
    rm -f "$DIR/fifo.blk"
fi
exit $fail
