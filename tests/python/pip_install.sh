#!/bin/sh
# pip_install.sh PYTHON SRC WORK LIBBLK — `pip install ./runtime/python` into a
# fresh virtual environment, then the installed package (libblk.so bundled
# from LIBBLK, the build's own) compiles and runs stdlib kernels from source
# on the CPU device against plain-Python references (cpu_kernels.py), from a
# directory outside the repository so that nothing is found in the tree.
# Exit 77 (skipped) when no virtual environment can be made or pip cannot
# fetch the build backend (setuptools) and has no copy in its cache.
set -u
python=$1; src=$2; work=$3; libblk=$4
rm -rf "$work"; mkdir -p "$work"
# nothing from the tree or the build: only what pip installed
unset PYTHONPATH BLK_LIBBLKRT BLK_STDLIB_DIR
if ! "$python" -m venv "$work/venv" > "$work/venv.log" 2>&1; then
    echo "pip_install: SKIPPED: cannot create a virtual environment with $python:"; cat "$work/venv.log"
    exit 77
fi
pip="$work/venv/bin/python -m pip"
# A copy of the source: pip builds in the tree it is given, which must stay clean.
mkdir -p "$work/src/runtime" && cp -r "$src/runtime/python" "$work/src/runtime/python" && cp -r "$src/stdlib" "$work/src/stdlib"
rm -rf "$work/src/runtime/python/build" "$work/src/runtime/python/blk/__pycache__"
if ! BLK_LIBBLK="$libblk" $pip install --disable-pip-version-check -q "$work/src/runtime/python" > "$work/pip.log" 2>&1; then
    if grep -q "Could not find a version that satisfies the requirement setuptools\|Failed to establish a new connection\|No matching distribution found for setuptools" "$work/pip.log"; then
        echo "pip_install: SKIPPED: pip cannot fetch setuptools (no network, nothing cached):"; tail -5 "$work/pip.log"
        exit 77
    fi
    cat "$work/pip.log"; echo "FAIL: pip install"; exit 1
fi
site=$("$work/venv/bin/python" -c "import blk, os; print(os.path.dirname(blk.__file__))") || exit 1
case $site in "$work/venv/"*) ;; *) echo "FAIL: blk imported from $site, not the venv"; exit 1 ;; esac
[ -f "$site/libblk.so" ] && [ -f "$site/stdlib/softmax.blk" ] || { echo "FAIL: the wheel lacks libblk.so or the stdlib"; ls "$site"; exit 1; }
cd "$work" || exit 1
"$work/venv/bin/python" -m blk --version || { echo "FAIL: python -m blk --version"; exit 1; }
BLK_DEVICE=cpu "$work/venv/bin/python" "$src/tests/python/cpu_kernels.py" > "$work/run.log" 2>&1 ||
    { cat "$work/run.log"; echo "FAIL: cpu_kernels.py in the venv"; exit 1; }
cat "$work/run.log"
grep -q "$site/libblk.so" "$work/run.log" || { echo "FAIL: not the wheel's libblk.so"; exit 1; }
echo "pip_install: ok"
