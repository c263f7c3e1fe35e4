#!/usr/bin/env bash
# Build linkdyn's extensions with AddressSanitizer and UndefinedBehaviorSanitizer (gcc) into
# a separate environment, .venv-asan, and run the test suite under them. Any invalid memory
# access or undefined behaviour in the C core or the Cython kernels aborts the run with a
# report (UBSan is made fatal). Leak checking is off: CPython itself keeps memory at exit.
#
#   bash ci/sanitize.sh                 # the tests not marked slow
#   bash ci/sanitize.sh tests/test_friction.py -x    # arguments go to pytest
#
# Run ci/install.sh first (system packages). Takes a few minutes: the sanitized code runs
# 2-3x slower.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
CC=${CC:-gcc}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"

[ -x .venv-asan/bin/python ] || "$PYTHON" -m venv .venv-asan
.venv-asan/bin/python -m pip install -q --upgrade pip
# Dependencies first (numpy, scipy come as wheels), then linkdyn alone with the flags, built
# from a fresh copy of the sources (setuptools would reuse objects left in ./build by an
# ordinary build, and an ordinary build would reuse the instrumented ones).
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
cp -r src csrc setup.py pyproject.toml MANIFEST.in README.md "$src"/
rm -f "$src"/src/linkdyn/_*.c "$src"/src/linkdyn/*.so
.venv-asan/bin/python -m pip install -q "$src[test,cholmod]"
rm -rf "$src"/build "$src"/src/linkdyn/_*.c
CC="$CC" CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" \
    .venv-asan/bin/python -m pip install -q --no-cache-dir --force-reinstall --no-deps "$src"
# Check that the installed extensions are instrumented.
ext=$(ls .venv-asan/lib/python*/site-packages/linkdyn/_bdf*.so 2>/dev/null | head -1)
if [ -z "$ext" ] || [ "$(nm -D "$ext" | grep -c __asan)" -eq 0 ]; then
    echo "ci/sanitize.sh: the extensions were not built with AddressSanitizer" >&2
    exit 1
fi

libasan=$("$CC" -print-file-name=libasan.so)
libubsan=$("$CC" -print-file-name=libubsan.so)
# The interpreter is not instrumented: the runtime is preloaded so that it comes first.
export LD_PRELOAD="$libasan $libubsan"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The straight-line Schur code the runs compile (linkdyn.solve.generated) gets the same
# sanitizers: it reads $CFLAGS, and keeps its libraries apart by their flags.
export CFLAGS="$flags"
if [ $# -eq 0 ]; then
    set -- tests -m "not slow" -q -p no:cacheprovider
fi
.venv-asan/bin/python -m pytest "$@"
