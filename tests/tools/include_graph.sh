#!/bin/sh
# include_graph.sh SRCDIR — the shape of the tree (docs/architecture.md):
#
# 1. Includes between compiler's folders go down only, so no two folders
#    include each other (no cycle). Every #include "..." of every source
#    under compiler/ and runtime/ is resolved as the compiler resolves it
#    (the including file's folder, then compiler/, compiler/include/,
#    runtime/include/; front/parse.h is generated from front/parse.y) and
#    the part holding the included file must sit in a lower layer than the
#    includer's part, or be the same part. The layers, as the code is:
#
#      7  driver   compile.c autotune.c variant.c stdlib_dir.c driver/
#                  runtime/jit.c (the runtime's compiler hook: blkc.h only)
#      6  sema     AST -> Block IR
#      5  context  compile.h: the compilation context sema reads
#      4  codegen
#      3  passes interp
#      2  ir
#      1  front target runtime (libblkrt: the public headers only)
#      0  base (util diag, ir/fpencode.h)  api (compiler/include, runtime/include)
#
#    A new folder, or a root file not named here, fails until it is placed.
# 2. No C source (.c .h .re .y .def) under compiler/ or runtime/ is over
#    MAX_LINES lines, save the files in ALLOW below, each with its reason.
# 3. The runtime reaches a device through its operations table (rt.h): only
#    the GPU's files (gpu_*.c, lazy.c) include gpu.h; only device.c (which
#    picks a table at open) and the tables' own files name rt_gpu_ops or
#    rt_cpu_ops; BLKRT_KIND_ appears only where a device fills its public
#    blkrt_device_info (no file asks which kind a device is).
# Fails naming each include and each file that breaks a rule.
src=${1:-.}
cd "$src" || exit 2
MAX_LINES=1000
# file:lines-it-may-have  why
ALLOW="" # none today
fail=0

part_of() { # PATH -> part
  case $1 in
    compiler/util.[ch]|compiler/diag.[ch]) echo base ;;
    compiler/ir/fpencode.h) echo base ;; # libc only; runtime/convert.c shares the encoder
    compiler/include/*|runtime/include/*) echo api ;;
    compiler/compile.h) echo context ;;
    compiler/compile.c|compiler/autotune.c|compiler/variant.c|compiler/stdlib_dir.c|compiler/driver/*) echo driver ;;
    runtime/jit.c) echo driver ;;
    compiler/front/*) echo front ;;
    compiler/target/*) echo target ;;
    compiler/ir/*) echo ir ;;
    compiler/passes/*) echo passes ;;
    compiler/interp/*) echo interp ;;
    compiler/codegen/*) echo codegen ;;
    compiler/sema/*) echo sema ;;
    runtime/*) echo runtime ;;
    *) echo "?" ;;
  esac
}
layer_of() { # part -> layer
  case $1 in
    base|api) echo 0 ;; front|target|runtime) echo 1 ;; ir) echo 2 ;; passes|interp) echo 3 ;;
    codegen) echo 4 ;; context) echo 5 ;; sema) echo 6 ;; driver) echo 7 ;; *) echo "?" ;;
  esac
}

files=$(find compiler runtime \( -name '*.[ch]' -o -name '*.re' -o -name '*.y' -o -name '*.def' \) | sort)
[ -n "$files" ] || { echo "FAIL: no sources under $src/compiler, $src/runtime"; exit 1; }
for f in $files; do
  from=$(part_of "$f")
  [ "$from" = "?" ] && { echo "FAIL: $f: in no part (place it in tests/tools/include_graph.sh)"; fail=1; continue; }
  d=$(dirname "$f")
  for inc in $(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*|\1|p' "$f"); do
    t=
    for cand in "$d/$inc" "compiler/$inc" "compiler/include/$inc" "runtime/include/$inc"; do
      [ -e "$cand" ] && { t=$cand; break; }
    done
    [ "$inc" = front/parse.h ] && t=compiler/front/parse.y
    [ -n "$t" ] || { echo "FAIL: $f includes \"$inc\", found nowhere"; fail=1; continue; }
    to=$(part_of "$(realpath -m --relative-to=. "$t")")
    [ "$to" = "$from" ] && continue
    if [ "$(layer_of "$to")" = "?" ] || [ "$(layer_of "$to")" -ge "$(layer_of "$from")" ]; then
      echo "FAIL: $f ($from, layer $(layer_of "$from")) includes $inc ($to, layer $(layer_of "$to")): includes go down only"
      fail=1
    fi
  done
  n=$(wc -l < "$f")
  limit=$MAX_LINES
  for a in $ALLOW; do [ "${a%%:*}" = "$f" ] && limit=${a#*:}; done
  [ "$n" -le "$limit" ] || { echo "FAIL: $f has $n lines (at most $limit: split it by idea)"; fail=1; }
done
for f in $(grep -l '#include "gpu.h"' runtime/*.c runtime/*.h 2>/dev/null); do
  case $f in runtime/gpu_*.c|runtime/lazy.c) ;; *) echo "FAIL: $f includes gpu.h (the GPU device's own header)"; fail=1 ;; esac
done
for f in $(grep -l 'rt_gpu_ops\|rt_cpu_ops' runtime/*.c 2>/dev/null); do
  case $f in runtime/device.c|runtime/gpu_*.c|runtime/lazy.c|runtime/cpu_device.c) ;;
    *) echo "FAIL: $f names a device table (go through d->ops)"; fail=1 ;;
  esac
done
grep -n 'BLKRT_KIND_' runtime/*.c | grep -v 'in->kind = BLKRT_KIND_' | while read -r l; do
  echo "FAIL: $l: a test of a device's kind (go through d->ops)"
done | grep . && fail=1
[ $fail = 0 ] && echo "include graph, file sizes and device tables: ok"
exit $fail
