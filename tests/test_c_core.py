"""The C core on its own, compiled as strict C99 and run plainly and under valgrind:
csrc/tests/test_bdf.c (the integrator on a pendulum written directly against ld_system),
csrc/tests/test_cams.c (the cams' curves: gaps and support functions against closed forms
and finite differences),
csrc/tests/test_forces.c (the force elements against finite differences and energy),
csrc/tests/test_kernels.c (a model's compiled arrays and kernels against finite differences,
and run by the integrator with no Python: a pendulum's exact period, a double pendulum's
energy) and csrc/tests/test_lcp.c (Lemke's method)."""

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


#: The integrator's modules (csrc/ld_work.h lists them with their layers).
CORE = ("csrc/ld_run.c", "csrc/ld_bdf.c", "csrc/ld_rk.c", "csrc/ld_sens.c", "csrc/ld_schur.c",
        "csrc/ld_schur_gen.c",
        "csrc/ld_linear.c", "csrc/ld_control.c")
PROGRAMS = {"test_angles": ("csrc/tests/test_angles.c", "csrc/ld_angles.c", "csrc/ld_cams.c"),
            "test_bdf": ("csrc/tests/test_bdf.c", *CORE),
            "test_cams": ("csrc/tests/test_cams.c", "csrc/ld_cams.c"),
            "test_forces": ("csrc/tests/test_forces.c", "csrc/ld_forces.c", "csrc/ld_forces3.c",
                            "csrc/ld_cams.c"),
            "test_kernels": ("csrc/tests/test_kernels.c", "csrc/ld_kernels.c", "csrc/ld_angles.c",
                             "csrc/ld_cams.c",
                             "csrc/ld_forces.c",
                             "csrc/ld_forces3.c", *CORE),
            "test_lcp": ("csrc/tests/test_lcp.c", "csrc/ld_lcp.c")}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def binary(tmp_path_factory, request):
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("c") / request.param
    env = os.environ
    lib = [f"-L{env['SUITESPARSE_LIBRARY_DIR']}"] if "SUITESPARSE_LIBRARY_DIR" in env else []
    cmd = [cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-g",
           *[str(ROOT / p) for p in PROGRAMS[request.param]],
           f"-I{ROOT / 'csrc'}", *[f"-I{d}" for d in suitesparse_include()], *lib,
           "-lklu", "-lldl", "-lamd", "-lm", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def test_c_core(binary):
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout and "FAIL" not in run.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_c_core_under_valgrind(binary):
    # Without a preloaded sanitizer runtime (ci/sanitize.sh preloads one into the tests).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    run = subprocess.run(["valgrind", "-q", "--error-exitcode=3", "--leak-check=full",
                          "--errors-for-leak-kinds=definite,indirect", str(binary)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout
