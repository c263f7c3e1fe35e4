"""The compiled kernels against finite differences and hand computations."""

import math

import numpy as np
import pytest

import linkdyn
from conftest import ROUNDOFF, central_difference, random_state


@pytest.fixture(params=["fourbar", "jansen", "chain"])
def model(request, fourbar, jansen):
    return {"fourbar": fourbar, "jansen": jansen, "chain": linkdyn.chain(7)}[request.param]


def test_jacobian_matches_central_differences(model):
    for seed in range(3):
        q, _ = random_state(model, seed)
        fd = central_difference(lambda x: model.phi(x, 0.3), q)
        J = model.phi_q(q, 0.3).toarray()
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-8)


def test_jacobian_pattern_holds_every_nonzero(model):
    # Every entry that finite differences find non-zero lies in the fixed pattern.
    q, _ = random_state(model, 7)
    pattern = model.phi_q(q).copy()
    pattern.data[:] = 1.0
    fd = central_difference(model.phi, q)
    assert np.all((np.abs(fd) < 1e-9) | (pattern.toarray() == 1.0))


def test_gamma_is_minus_derivative_of_phi_q_v_along_v(model):
    # gamma = -(Phi_q v)_q v for scleronomic constraints.
    for seed in range(3):
        q, v = random_state(model, seed)
        h = 1e-6
        d = (model.phi_q(q + h * v) @ v - model.phi_q(q - h * v) @ v) / (2 * h)
        np.testing.assert_allclose(model.gamma(q, v), -d, rtol=0, atol=1e-7)


def test_phi_t_zero_for_time_independent_constraints(model):
    q, _ = random_state(model, 1)
    h = 1e-3
    fd = (model.phi(q, 1.0 + h) - model.phi(q, 1.0 - h)) / (2 * h)
    np.testing.assert_array_equal(fd, 0.0)
    np.testing.assert_array_equal(model.phi_t(q, 1.0), 0.0)


def test_force_derivatives_match_differences(model):
    q, v = random_state(model, 2)
    fq = central_difference(lambda x: model.force(x, v), q)
    fv = central_difference(lambda x: model.force(q, x), v)
    np.testing.assert_allclose(model.force_q(q, v).toarray(), fq, atol=1e-9)
    np.testing.assert_allclose(model.force_v(q, v).toarray(), fv, atol=1e-9)


def test_gravity_force_and_potential():
    b = linkdyn.ModelBuilder("g", gravity=(1.5, -9.81))
    b.add_bar("rod", length=2.0, density=3.0)
    m = b.build()
    q = np.array([0.4, -0.7, 0.6, 0.8])
    np.testing.assert_allclose(m.force(q, np.zeros(4)), [6 * 1.5, 6 * -9.81, 0, 0])
    # V = -m g . r
    assert m.energy(q, np.zeros(4))[1] == pytest.approx(-(6 * 1.5 * 0.4 + 6 * -9.81 * -0.7))


def test_energy_by_hand():
    # A bar of mass m, length L turning at omega about its centre moving at (vx, vy):
    # T = m |v|^2 / 2 + (m L^2 / 12) omega^2 / 2 and V = m g y.
    m_, L, w, vx, vy, y, th = 0.8, 0.6, 2.5, 0.3, -1.1, 0.25, 0.7
    b = linkdyn.ModelBuilder("bar", gravity=(0.0, -9.81))
    b.add_bar("rod", length=L, mass=m_)
    model = b.build()
    u = np.array([math.cos(th), math.sin(th)])
    q = np.array([0.1, y, *u])
    v = np.array([vx, vy, -w * u[1], w * u[0]])
    T, V = model.energy(q, v)
    assert T == pytest.approx(0.5 * m_ * (vx**2 + vy**2) + 0.5 * m_ * L**2 / 12 * w**2,
                              rel=1e-14)
    assert V == pytest.approx(m_ * 9.81 * y, rel=1e-14)


def test_body_point_positions_rotate_with_u(fourbar):
    q = fourbar.q0.copy()
    i = fourbar.body_names.index("coupler")
    x, y, th = 0.2, -0.1, 0.9
    q[4 * i:4 * i + 4] = (x, y, math.cos(th), math.sin(th))
    xi, eta = 0.05, 0.08  # point P
    expect = (x + xi * math.cos(th) - eta * math.sin(th),
              y + xi * math.sin(th) + eta * math.cos(th))
    np.testing.assert_allclose(fourbar.marker_positions(q)[0], expect, rtol=ROUNDOFF)


def test_assemble_writes_the_same_values(model):
    q, v = random_state(model, 3)
    phi = np.empty(model.nc)
    vals = np.empty(model.kernels.phiq_nnz)
    gam = np.empty(model.nc)
    model.kernels.assemble(q, v, 0.0, phi, vals, gam)
    np.testing.assert_array_equal(phi, model.phi(q))
    np.testing.assert_array_equal(vals, model.phi_q(q).data)
    np.testing.assert_array_equal(gam, model.gamma(q, v))


def test_kernel_arguments_are_checked(fourbar):
    with pytest.raises(ValueError, match="length 12"):
        fourbar.phi(np.zeros(5))
    with pytest.raises(ValueError, match="length 12"):
        fourbar.gamma(np.zeros(12), np.zeros(3))
    with pytest.raises(ValueError, match="writeable contiguous float64"):
        fourbar.kernels.phi(np.zeros(12), 0.0, np.zeros(fourbar.nc, dtype=np.float32))
    with pytest.raises(ValueError, match="wrong lengths"):
        fourbar.kernels.assemble(np.zeros(12), np.zeros(12), 0.0, np.zeros(2), np.zeros(2),
                                 np.zeros(2))


def test_system_capsule_is_named():
    import ctypes

    cap = linkdyn.chain(2).kernels.system_capsule()
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    assert get_name(cap) == b"linkdyn.ld_system"


def test_compiled_arrays_are_frozen(fourbar):
    with pytest.raises(ValueError):
        fourbar.mass[0] = 1.0
    with pytest.raises(ValueError):
        fourbar.phiq_rowind[0] = 0


def test_constraint_hessian_matches_differences_of_phi_q_transpose_lam(model):
    q, _ = random_state(model, 4)
    lam = np.random.default_rng(5).standard_normal(model.nc)
    fd = central_difference(lambda x: model.phi_q(x).T @ lam, q)
    np.testing.assert_allclose(model.constraint_hessian(q, lam).toarray(), fd, atol=1e-8)


def test_constraint_norms_kernel(model):
    q, v = random_state(model, 6)
    a, b = model.kernels.constraint_norms(q, v, 0.2)
    assert a == pytest.approx(np.linalg.norm(model.phi(q, 0.2)), rel=1e-14)
    assert b == pytest.approx(np.linalg.norm(model.phi_q(q, 0.2) @ v + model.phi_t(q, 0.2)),
                              rel=1e-14)


def _exact_rows(model, q):
    """The constraint rows of ``model`` at ``q`` in rational arithmetic: unit and revolute rows,
    and the generic rows whose terms are all time-independent ({row: Fraction})."""
    from fractions import Fraction as F

    a = model.kernels.arrays
    x = [F(v) for v in q]
    rows = {}
    for b, r in zip(a["unit_body"], a["unit_row"]):
        rows[int(r)] = x[4 * b + 2] ** 2 + x[4 * b + 3] ** 2 - 1
    for k, r in enumerate(a["rev_row"]):
        px = py = F(0)
        for s, sgn in ((0, 1), (1, -1)):
            b = a["rev_body"][2 * k + s]
            xi, eta = (F(v) for v in a["rev_local"][4 * k + 2 * s: 4 * k + 2 * s + 2])
            if b < 0:
                px, py = px + sgn * xi, py + sgn * eta
            else:
                px += sgn * (x[4 * b] + xi * x[4 * b + 2] - eta * x[4 * b + 3])
                py += sgn * (x[4 * b + 1] + xi * x[4 * b + 3] + eta * x[4 * b + 2])
        rows[int(r)], rows[int(r) + 1] = px, py
    timed = {int(r) for r, tf in zip(a["term_row"], a["term_tf"]) if tf != 0}
    for r, i, j, c in zip(a["term_row"], a["term_a"], a["term_b"], a["term_coef"]):
        if int(r) in timed:
            continue
        term = F(c) * (x[i] if i >= 0 else 1) * (x[j] if j >= 0 else 1)
        rows[int(r)] = rows.get(int(r), F(0)) + term
    return rows


@pytest.mark.parametrize("name", ["nfourbar40", "five_ss"])
def test_constraint_residuals_are_summed_without_rounding_noise(name):
    """Phi is evaluated as compensated sums (_kernels.pyx): on the constraint manifold, where
    terms of the size of the coordinates cancel, every row equals the exact value of its
    expression at the given q to two units in the last place of the result. A plain double
    precision sum errs by up to eps times the largest term (here up to 40 m): near a singular
    configuration Newton turns that into position noise (ld_bdf.c)."""
    from linkdyn.models import linkage, nfourbar
    from linkdyn.natural import compile_linkage

    model = nfourbar(40) if name == "nfourbar40" else compile_linkage(linkage("five_ss"))
    if name == "nfourbar40":   # a state on the manifold, the rockers at some 70 degrees
        q = linkdyn.simulate(model, 0.3, rtol=1e-10, atol=1e-10, t_out="final").q[-1]
    else:
        q = model.q0
    phi = model.phi(q, 0.0)
    exact = _exact_rows(model, q)
    assert len(exact) >= 10
    for r, value in exact.items():
        v = float(value)
        assert abs(phi[r] - v) <= 2 * np.spacing(abs(v)) + 1e-30, (r, phi[r], v)
    if name == "nfourbar40":
        # The test tells the difference: the revolute rows summed naively, as the kernels
        # did before, miss the exact values by far more than a rounding of the result.
        a = model.kernels.arrays
        naive_error = 0.0
        for k, r in enumerate(a["rev_row"]):
            px = 0.0
            for s, sgn in ((0, 1.0), (1, -1.0)):
                b = a["rev_body"][2 * k + s]
                xi, eta = a["rev_local"][4 * k + 2 * s: 4 * k + 2 * s + 2]
                px += sgn * (xi if b < 0 else q[4 * b] + xi * q[4 * b + 2] - eta * q[4 * b + 3])
            v = float(exact[int(r)])
            naive_error = max(naive_error, abs(px - v) / (2 * np.spacing(abs(v)) + 1e-30))
        assert naive_error > 100


def test_kernels_refuse_generic_terms_out_of_row_order():
    # k_phi sums each row's consecutive terms as one compensated sum: arrays whose rows are
    # not in order would silently overwrite a row, so the constructor refuses them.
    from linkdyn._kernels import Kernels
    from linkdyn.models import linkage
    from linkdyn.natural import compile_linkage

    arrays = dict(compile_linkage(linkage("five_ss")).kernels.arrays)
    arrays["nc"] = compile_linkage(linkage("five_ss")).nc
    Kernels(arrays)   # as compiled: accepted
    arrays["term_row"] = arrays["term_row"][::-1].copy()
    with pytest.raises(ValueError, match="term_row must be non-decreasing"):
        Kernels(arrays)


def test_kernels_refuse_frame_rows_out_of_range():
    # The spatial frame rows index q, the rows and the value arrays directly: malformed
    # arrays are refused when the kernels are made, not met inside a step.
    from linkdyn._kernels import Kernels
    from linkdyn.models.spatial import heavy_top

    model = heavy_top()
    arrays = dict(model.kernels.arrays)
    arrays["nc"] = model.nc
    Kernels(arrays)   # as compiled: accepted
    bad = dict(arrays, frame_slot=arrays["frame_slot"].copy())
    bad["frame_slot"][5] = 10**6
    with pytest.raises(ValueError, match="frame row's coordinate, row or slot is out of range"):
        Kernels(bad)
    with pytest.raises(ValueError, match="frame_hslot must have 27 entries per body"):
        Kernels(dict(arrays, frame_hslot=arrays["frame_hslot"][:-1]))
    with pytest.raises(ValueError, match="out of range"):
        Kernels(dict(arrays, frame_base=arrays["frame_base"] + model.nq))


# -- the compiled patterns (linkdyn.compile.patterns) ------------------------------------------

def _csc_entry(colptr, rowind, slot):
    """(row, column) of CSC value slot ``slot``."""
    col = int(np.searchsorted(colptr, slot, side="right")) - 1
    return int(rowind[slot]), col


def _generic_rows(rng, nq, nrows):
    """Random generic rows: constants, linear and quadratic terms (a == b among them),
    columns repeated within a row, and zero coefficients (which add nothing)."""
    generic = []
    for r in range(nrows):
        parts = []
        for _ in range(int(rng.integers(1, 3))):
            terms = {}
            for _ in range(int(rng.integers(1, 6))):
                a = int(rng.integers(-1, nq))
                b = -1 if a < 0 or rng.random() < 0.4 else int(rng.integers(0, nq))
                key = (min(a, b), max(a, b)) if b >= 0 else (a, -1)
                terms[key] = 0.0 if rng.random() < 0.1 else float(rng.normal())
            parts.append((terms, int(rng.integers(0, 5)), int(rng.integers(-1, 3))))
        generic.append((f"g{r}", f"owner{r}", parts))
    return generic


@pytest.mark.parametrize("seed", range(6))
def test_generic_rows_slots_name_their_entries(seed):
    """compile_rows: every term's Jacobian slots hold its (row, column), every Hessian slot
    its pair and its transpose, the earlier rows' entries keep theirs, and the pattern holds
    exactly the entries named (no more)."""
    from linkdyn.compile.patterns import compile_rows

    rng = np.random.default_rng(seed)
    nq, nc = 9, 3
    rows = [0, 0, 1, 2, 2]                  # rows made before the generic ones
    cols = [0, 4, 4, 1, 8]
    before = list(zip(rows, cols))
    hdiag = np.array([[1, 2], [4, 4]]) if seed % 2 else np.array([3, 5])
    generic = _generic_rows(rng, nq, 5)
    arrays, names, owners, n, slot, hess_slot = compile_rows(
        generic, nq, nc, rows, cols, [], [], hdiag)
    cp, ri = arrays["phiq_colptr"], arrays["phiq_rowind"]
    hcp, hri = arrays["hess_colptr"], arrays["hess_rowind"]
    assert n == nc + len(generic) and names == [g[0] for g in generic]
    assert list(arrays["gen_row"]) == list(range(nc, n))
    for k, (r, c) in enumerate(before):
        assert _csc_entry(cp, ri, slot[k]) == (r, c)
    named = set(before)
    expected_terms = [(nc + r, a, b, coef) for r, (_, _, parts) in enumerate(generic)
                      for terms, _, _ in parts for (a, b), coef in terms.items() if coef != 0.0]
    assert len(arrays["term_row"]) == len(expected_terms)
    ts, th = arrays["term_slot"].reshape(-1, 2), arrays["term_hslot"].reshape(-1, 2)
    for m, (r, a, b, coef) in enumerate(expected_terms):
        assert (arrays["term_row"][m], arrays["term_a"][m], arrays["term_b"][m],
                arrays["term_coef"][m]) == (r, a, b, coef)
        for s, col in enumerate((a, b)):
            if col < 0:
                assert ts[m, s] == -1
            else:
                assert _csc_entry(cp, ri, ts[m, s]) == (r, col)
                named.add((r, col))
        if a >= 0 and b >= 0:
            assert _csc_entry(hcp, hri, th[m, 0]) == (a, b)
            assert _csc_entry(hcp, hri, th[m, 1]) == (b, a)
        else:
            assert list(th[m]) == [-1, -1]
    assert len(ri) == len(named) == cp[-1]
    generic_slots = sorted(slot[len(before):])
    assert list(arrays["gen_slot"]) == generic_slots
    wanted = [tuple(p) for p in hdiag] if hdiag.ndim == 2 else [(i, i) for i in hdiag]
    for k, pair in enumerate(wanted):
        assert _csc_entry(hcp, hri, hess_slot[k]) == pair


def test_duplicate_jacobian_entries_are_refused():
    from linkdyn.compile.patterns import compile_rows

    with pytest.raises(AssertionError, match="duplicate"):
        compile_rows([], 4, 2, [0, 1, 0], [2, 3, 2], [], [], ())


@pytest.mark.parametrize("name", ["jansen", "jansen_driven", "stephenson2", "bricard",
                                  "spatial_slider_crank", "flyball_governor", "heavy_top"])
def test_entries_flagged_constant_never_change(name):
    # The solvers plan on phiq_const (csrc/ld_schur.c, "Constant entries"): an entry flagged
    # constant must keep its value at every state and time; the flags must also find the
    # entries that do move (rigid-body and driven rows), or the plan would be empty.
    model = linkdyn.load_model(name)
    k = model.kernels
    flags = np.asarray(k.phiq_const)[:k.phiq_nnz].astype(bool)
    ref = np.asarray(k.phi_q_values(model.q0, 0.0))
    moved = np.zeros(k.phiq_nnz, dtype=bool)
    rng = np.random.default_rng(3)
    for seed in range(4):
        q, _ = random_state(model, seed)
        vals = np.asarray(k.phi_q_values(q, float(rng.uniform(0.0, 5.0))))
        np.testing.assert_array_equal(vals[flags], ref[flags])
        moved |= vals != ref
    assert flags.any() and (~flags).any()
    assert moved[~flags].mean() > 0.5
