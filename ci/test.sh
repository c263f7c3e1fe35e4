#!/usr/bin/env bash
# Run the test suite against the linkdyn installed in ./.venv (by ci/install.sh).
# Extra arguments go to pytest. Fails when any test fails, and when no test was collected.
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest tests "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "ci/test.sh: pytest collected no tests: failing" >&2
    exit 1
fi
exit "$rc"
