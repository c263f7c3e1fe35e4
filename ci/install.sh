#!/usr/bin/env bash
# Install everything linkdyn needs on Debian/Ubuntu: the system packages (a C compiler,
# SuiteSparse 5.x headers and libraries, Python's venv, and Chromium with its driver for the
# test of the HTML export in a real browser), then linkdyn with its test and CHOLMOD extras
# into ./.venv. Safe to run again: it installs only what is missing.
#
# Environment:
#   PYTHON                   the interpreter for the virtual environment (default: python3)
#   SUITESPARSE_INCLUDE_DIR  SuiteSparse headers elsewhere than /usr/include/suitesparse
#   SUITESPARSE_LIBRARY_DIR  SuiteSparse libraries elsewhere than the linker's default path
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

if command -v apt-get >/dev/null 2>&1; then
    missing=()
    for pkg in build-essential libsuitesparse-dev chromium chromium-driver; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    "$PYTHON" -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
    "$PYTHON" -c "import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
        || missing+=(python3-dev)
    if [ ${#missing[@]} -gt 0 ]; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        echo "ci/install.sh: installing system packages: ${missing[*]}"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
else
    echo "ci/install.sh: no apt-get; install SuiteSparse (KLU, CHOLMOD) yourself (see docs/getting_started.md)" >&2
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# Rebuild only when the sources or the build settings changed since the last install here:
# a digest of every source file (not the build's own outputs) is kept beside the venv.
digest=$(find src csrc setup.py pyproject.toml MANIFEST.in -type f ! -name '*.so' \
             ! -name '*.pyc' ! -path 'src/linkdyn/*.c' ! -path 'src/linkdyn/*.html' \
             ! -path '*.egg-info/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum)
stamp=.venv/.linkdyn-sources
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] \
        && .venv/bin/python -c "import linkdyn" >/dev/null 2>&1; then
    echo "ci/install.sh: linkdyn in .venv is up to date with the sources (nothing rebuilt)"
else
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q ".[test,cholmod]"
    echo "$digest" > "$stamp"
fi
echo "ci/install.sh: linkdyn $(.venv/bin/python -c 'import linkdyn; print(linkdyn.__version__)') installed in .venv"
