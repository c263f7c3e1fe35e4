#!/usr/bin/env bash
# Build and repair the wheel, install it into a fresh virtual environment without
# scikit-sparse (the CHOLMOD extra) and without access to the source tree, check that its
# extensions resolve SuiteSparse only from the wheel, then run the Jansen benchmark and the
# test suite from that install.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$repo/ci/build_wheel.sh" "$work/dist"
PYTHON=${PYTHON:-python3}
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
"$work/venv/bin/python" -m pip install -q "$work"/dist/repaired/linkdyn-*.whl pytest pytest-benchmark
if "$work/venv/bin/python" -c "import sksparse" 2>/dev/null; then
    echo "check_wheel: scikit-sparse must not be installed by the wheel" >&2
    exit 1
fi
cd "$work"   # nothing from the source tree on sys.path
"$work/venv/bin/python" "$repo/ci/check_wheel_libs.py"
"$work/venv/bin/linkdyn" simulate jansen
"$work/venv/bin/python" -m pytest "$repo/tests" -m "not slow" -q -p no:cacheprovider
