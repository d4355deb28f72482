#!/bin/sh
# install.sh BUILD SRC WORK FAKE_CUDA — the install tree and its two consumers.
#
# cmake --install BUILD into a fresh prefix under WORK; every promised file is
# there; the installed blkc finds the installed stdlib; then examples/embed is
# built against the prefix twice, with CMake (find_package(blk)) and with
# pkg-config, and run: jit (libblk, .blk source compiled at run time on the
# CPU device, result checked) and aot (libblkrt only, PTX from the installed
# blkc, launched on the fake driver FAKE_CUDA: there is no GPU here).
set -u
build=$1; src=$2; work=$3; fake=$4
prefix=$work/prefix
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/blkc lib/libblk.so lib/libblk.so.0 lib/libblkrt.so lib/libblkrt.so.0 \
         include/blk/blk.h include/blk/blkc.h include/blk/blkrt.h include/blk/blkrt_jit.h \
         share/blk/stdlib/elementwise.blk share/blk/stdlib/softmax.blk \
         lib/cmake/blk/blkConfig.cmake lib/cmake/blk/blkConfigVersion.cmake lib/cmake/blk/blkTargets.cmake \
         lib/pkgconfig/blk.pc lib/pkgconfig/blkrt.pc share/man/man1/blkc.1 share/doc/blk/LICENSE \
         share/bash-completion/completions/blkc; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
# SONAMEs and exports: libblk.so.0 / libblkrt.so.0; only the public API
# exported; libblkrt needs no compiler and no LLVM.
soname() { LC_ALL=C readelf -d "$1" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p'; }
[ "$(soname "$prefix/lib/libblk.so")" = libblk.so.0 ] || fail "libblk SONAME is '$(soname "$prefix/lib/libblk.so")'"
[ "$(soname "$prefix/lib/libblkrt.so")" = libblkrt.so.0 ] || fail "libblkrt SONAME"
bad=$(nm -D --defined-only "$prefix/lib/libblk.so" | awk '{print $3}' | grep -v '^\(blkc_\|blkrt_\|blk_version\)' | head -5)
[ -z "$bad" ] || fail "libblk.so exports non-API symbols: $bad"
bad=$(nm -D --defined-only "$prefix/lib/libblkrt.so" | awk '{print $3}' | grep -v '^blkrt_' | head -5)
[ -z "$bad" ] || fail "libblkrt.so exports non-API symbols: $bad"
nm -D --defined-only "$prefix/lib/libblkrt.so" | grep -q ' blkc_' && fail "libblkrt.so carries the compiler"
LC_ALL=C readelf -d "$prefix/lib/libblkrt.so" | grep NEEDED | grep -qi 'llvm\|stdc++' && fail "libblkrt.so needs LLVM or libstdc++"
nm -D --defined-only "$prefix/lib/libblk.so" | grep -q ' blk_version$' || fail "libblk.so has no blk_version"

# The installed compiler finds the installed stdlib (the note of a failed
# import names the stdlib directory it searched).
printf 'import "no_such_file.blk";\n' > "$work/imp.blk"
"$prefix/bin/blkc" "$work/imp.blk" > "$work/imp.out" 2>&1
grep -q "stdlib ($prefix/share/blk/stdlib)" "$work/imp.out" || { cat "$work/imp.out"; fail "installed blkc does not search $prefix/share/blk/stdlib"; }
"$prefix/bin/blkc" --version | grep -q '^blkc ' || fail "installed blkc --version"

# Consumer 1: CMake, find_package(blk).
cmake -S "$src/examples/embed" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "configuring examples/embed"; }
cmake --build "$work/cmake" > "$work/cmake-build.log" 2>&1 || { cat "$work/cmake-build.log"; fail "building examples/embed"; }
BLK_DEVICE=cpu "$work/cmake/jit" || fail "examples/embed jit (CMake build)"
BLKRT_CUDA_LIBRARY=$fake "$work/cmake/aot" "$work/cmake/vadd.ptx" || fail "examples/embed aot (CMake build)"

# Consumer 2: pkg-config.
if command -v pkg-config >/dev/null; then
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    cc=${CC:-cc}
    $cc ${CFLAGS:-} ${LDFLAGS:-} -o "$work/jit_pc" "$src/examples/embed/jit.c" $(pkg-config --cflags --libs blk) -lm \
        -Wl,-rpath,"$(pkg-config --variable=libdir blk)" || fail "cc jit.c \$(pkg-config --cflags --libs blk)"
    $cc ${CFLAGS:-} ${LDFLAGS:-} -o "$work/aot_pc" "$src/examples/embed/aot.c" $(pkg-config --cflags --libs blkrt) \
        -Wl,-rpath,"$(pkg-config --variable=libdir blkrt)" || fail "cc aot.c \$(pkg-config --cflags --libs blkrt)"
    BLK_DEVICE=cpu "$work/jit_pc" || fail "jit (pkg-config build)"
    BLKRT_CUDA_LIBRARY=$fake "$work/aot_pc" "$work/cmake/vadd.ptx" || fail "aot (pkg-config build)"
    [ "$(pkg-config --modversion blk)" = "$("$prefix/bin/blkc" --version | cut -d' ' -f2)" ] || fail "blk.pc version"
else
    echo "install: pkg-config not found: the pkg-config consumer was not built"
fi
echo "install: prefix, CMake consumer and pkg-config consumer ok"
