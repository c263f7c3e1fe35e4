"""The C integrator on its own: csrc/tests/test_bdf.c (a pendulum written directly against
ld_system) compiled as strict C99 and run, plainly and under valgrind."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def suitesparse_include():
    env = os.environ
    dirs = [env["SUITESPARSE_INCLUDE_DIR"]] if "SUITESPARSE_INCLUDE_DIR" in env else []
    for prefix in filter(None, (os.environ.get("CONDA_PREFIX"), sys.prefix, "/usr/local",
                                "/opt/homebrew", "/usr")):
        d = Path(prefix) / "include" / "suitesparse"
        if (d / "klu.h").exists():
            dirs.append(str(d))
    return dirs


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("c") / "test_bdf"
    env = os.environ
    lib = [f"-L{env['SUITESPARSE_LIBRARY_DIR']}"] if "SUITESPARSE_LIBRARY_DIR" in env else []
    cmd = [cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-g",
           str(ROOT / "csrc/tests/test_bdf.c"), str(ROOT / "csrc/ld_bdf.c"),
           f"-I{ROOT / 'csrc'}", *[f"-I{d}" for d in suitesparse_include()], *lib,
           "-lklu", "-lm", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def test_c_integrator(binary):
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout and "FAIL" not in run.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_c_integrator_under_valgrind(binary):
    run = subprocess.run(["valgrind", "-q", "--error-exitcode=3", "--leak-check=full",
                          "--errors-for-leak-kinds=definite,indirect", str(binary)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout
