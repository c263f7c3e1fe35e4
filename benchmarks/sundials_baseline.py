"""A compiled baseline on linkdyn's own kernels: SUNDIALS (ARKODE's explicit RK-Fehlberg 7(8),
CVODE's Adams) on the index-1 form with Baumgarte stabilisation, its right-hand side in C
over a model's ld_system callbacks (benchmarks/sundials_baseline.c, which says how). The
comparison with linkdyn's methods then isolates the method: both sides evaluate the same
compiled residuals and Jacobians and neither calls Python in its loop.

``build()`` compiles the C file once per session with the system's C compiler against
Debian's libsundials-dev (6.4) and SuiteSparse, and returns None where they are missing (the
benchmarks that need it skip). ``run(model, method, tol, t_out)`` integrates a model from its
consistent initial state."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
SOURCE = HERE / "sundials_baseline.c"
METHODS = {"arkode-rkf78": 0, "cvode-adams": 1}
LIBS = ["-lsundials_arkode", "-lsundials_cvode", "-lsundials_nvecserial", "-lldl", "-lamd",
        "-lm"]
_built = {}


def build():
    """The compiled baseline as a ctypes library, or None (no compiler, SUNDIALS or
    SuiteSparse headers)."""
    if "lib" in _built:
        return _built["lib"]
    lib = None
    cc = shutil.which("cc") or shutil.which("gcc")
    include = [f"-I{HERE.parent / 'csrc'}"] + [f"-I{d}" for d in ("/usr/include/suitesparse",)
                                                 if Path(d).exists()]
    if cc and Path("/usr/include/arkode/arkode_erkstep.h").exists():
        out = Path(tempfile.mkdtemp(prefix="linkdyn-sundials-")) / "ldsun.so"
        done = subprocess.run([cc, "-std=c99", "-O2", "-fPIC", "-shared",
                               "-D_POSIX_C_SOURCE=199309L", *include, str(SOURCE), "-o",
                               str(out), *LIBS], capture_output=True, text=True)
        if done.returncode == 0:
            lib = ctypes.CDLL(str(out))
            lib.ldsun_run.restype = ctypes.c_int
            dbl = ctypes.POINTER(ctypes.c_double)
            lib.ldsun_run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double,
                                      ctypes.c_double, ctypes.c_double, ctypes.c_double,
                                      ctypes.c_long, ctypes.c_int, dbl, dbl, dbl, dbl, dbl,
                                      ctypes.POINTER(ctypes.c_long)]
    _built["lib"] = lib
    return lib


def _system_pointer(kernels):
    """The address of the ld_system of ``kernels``: valid while ``kernels`` lives (the
    capsule only carries it)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get(kernels.system_capsule(), b"linkdyn.ld_system")


#: status of a run that spent its step budget
BUDGET = -104


def run(model, method: str, tol: float, t_out, alpha: float = 10.0, beta: float = 10.0,
        max_steps: int = 200_000):
    """Integrate ``model`` from its consistent initial state through ``t_out`` (t_out[0] is
    the start) with ``method`` (a key of METHODS) at rtol = atol = tol, Baumgarte
    ``alpha``, ``beta``, in at most ``max_steps`` steps. Returns (seconds of the
    integration loop, q at the rows reached (rows, nq), steps, right-hand sides, status: 0,
    BUDGET, or the SUNDIALS flag of a failure)."""
    import linkdyn

    lib = build()
    if lib is None:
        raise RuntimeError("the SUNDIALS baseline could not be built (libsundials-dev?)")
    state = linkdyn.consistent_state(model, t=float(t_out[0]))
    t = np.ascontiguousarray(t_out, dtype=float)
    q0, v0 = (np.ascontiguousarray(x, dtype=float) for x in (state.q, state.v))
    q = np.zeros((len(t), model.nq))
    seconds = ctypes.c_double()
    counters = (ctypes.c_long * 3)()
    ptr = _system_pointer(model.kernels)     # model (and its kernels) live through the call
    dbl = ctypes.POINTER(ctypes.c_double)
    status = lib.ldsun_run(ptr, METHODS[method], tol, tol, alpha, beta, max_steps, len(t),
                           t.ctypes.data_as(dbl), q0.ctypes.data_as(dbl),
                           v0.ctypes.data_as(dbl), q.ctypes.data_as(dbl),
                           ctypes.byref(seconds), counters)
    return seconds.value, q[:counters[2]], counters[0], counters[1], status
