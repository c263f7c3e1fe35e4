"""Assembly of Phi, Phi_q (values in the fixed pattern) and gamma: compiled kernels against
the same kernels in plain numpy, for Jansen (11 bars) and a chain of 1,000 bars."""

import numpy as np
import pytest

import linkdyn
from numpy_kernels import NumpyKernels

MODELS = {"jansen": lambda: linkdyn.load_model("jansen"), "chain1000": lambda: linkdyn.chain(1000)}


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    model = MODELS[request.param]()
    rng = np.random.default_rng(0)
    q = model.q0 + 0.01 * rng.standard_normal(model.nq)
    v = rng.standard_normal(model.nq)
    out = (np.empty(model.nc), np.empty(model.kernels.phiq_nnz), np.empty(model.nc))
    ref = (np.empty(model.nc), np.empty(model.kernels.phiq_nnz), np.empty(model.nc))
    baseline = NumpyKernels(model)
    # Both must compute the same thing before either is timed: to the rounding of the
    # coordinates (the compiled residuals are compensated sums, numpy's plain ones; the
    # 1,000-bar chain reaches 1,000 m, where that rounding is 1e-13).
    model.kernels.assemble(q, v, 0.0, *out)
    baseline.assemble(q, v, *ref)
    scale = 16 * np.finfo(float).eps * max(1.0, float(np.abs(q).max()))
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=scale)
    return request.param, model, baseline, q, v, out


def test_assembly_linkdyn(benchmark, case):
    name, model, _, q, v, out = case
    benchmark.group = f"assembly {name}"
    benchmark.extra_info["role"] = "linkdyn"
    benchmark(model.kernels.assemble, q, v, 0.0, *out)


def test_assembly_numpy_baseline(benchmark, case):
    name, _, baseline, q, v, out = case
    benchmark.group = f"assembly {name}"
    benchmark.extra_info["role"] = "baseline"
    benchmark(baseline.assemble, q, v, *out)


@pytest.mark.parametrize("backend", ["cholmod", "superlu"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_consistent_state_backends(benchmark, monkeypatch, name, backend):
    # The cost of each route for the SPD projections: CHOLMOD (linkdyn[cholmod]) against
    # SciPy's SuperLU, the fallback of an install without scikit-sparse.
    if backend == "cholmod":
        pytest.importorskip("sksparse.cholmod")
    else:
        monkeypatch.setenv("LINKDYN_NO_CHOLMOD", "1")
    model = MODELS[name]()
    benchmark.group = f"consistent state {name}"
    benchmark.extra_info["role"] = "linkdyn" if backend == "cholmod" else "baseline"
    benchmark(linkdyn.consistent_state, model)
