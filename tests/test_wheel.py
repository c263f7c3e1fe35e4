"""The wheel users install: built, repaired, installed into a fresh environment without
scikit-sparse, its extensions resolving SuiteSparse only from the wheel, and the Jansen
benchmark and the test suite run from that install (ci/check_wheel.sh, about a minute)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("ldd") is None,
                    reason="the repaired-wheel check uses auditwheel and ldd (Linux)")
def test_repaired_wheel_is_self_contained_and_passes_the_tests():
    run = subprocess.run(["bash", str(ROOT / "ci" / "check_wheel.sh")], capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "all resolved inside" in run.stdout
    assert "faster than the published Python run" in run.stdout
    assert " passed" in run.stdout and " failed" not in run.stdout
