#!/usr/bin/env bash
# Build the documentation with warnings as errors, run every example of the gallery and
# every code block of the pages (Sphinx's doctest builder), against the linkdyn installed
# in ./.venv by ci/install.sh. Installs the docs extra's packages into .venv when missing
# (without rebuilding linkdyn). The site is written to docs/_build/html.
#
# Environment:
#   LINKDYN_DOCS_FAST=1   a quick look while writing: the gallery's examples are not run and
#                         warnings are not errors (the figures they make are missing)
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "ci/docs.sh: no .venv: run 'bash ci/install.sh' first" >&2; exit 1; }

# The docs extra of pyproject.toml, installed as plain requirements: linkdyn itself is
# already in .venv and is not rebuilt.
mapfile -t reqs < <("$py" - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"]["docs"]))
PY
)
if ! "$py" - "${reqs[@]}" <<'PY' >/dev/null 2>&1
import sys
from importlib.metadata import PackageNotFoundError, version
from packaging.requirements import Requirement
for text in sys.argv[1:]:
    req = Requirement(text)
    try:
        if not req.specifier.contains(version(req.name), prereleases=True):
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
    echo "ci/docs.sh: installing the docs extra: ${reqs[*]}"
    "$py" -m pip install -q "${reqs[@]}"
fi

export MPLBACKEND=Agg
strict=(-W --keep-going)
gallery=()
if [ "${LINKDYN_DOCS_FAST:-0}" = 1 ]; then
    strict=()
    gallery=(-D plot_gallery=0)
fi
rm -rf docs/_build docs/api/generated docs/auto_examples
"$py" -m sphinx "${strict[@]}" -q -b html "${gallery[@]}" docs docs/_build/html
# The pages' code blocks; the gallery already ran above.
"$py" -m sphinx "${strict[@]}" -q -b doctest -D plot_gallery=0 docs docs/_build/doctest
echo "ci/docs.sh: documentation built in docs/_build/html"
