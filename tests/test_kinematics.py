"""Kinematic analysis against closed forms, the classic circle-intersection construction,
finite differences, and singular configurations."""

import math
import warnings

import numpy as np
import pytest

import linkdyn
from linkdyn import ModelError, SingularConfigurationError, kinematics, laws
from conftest import (ROUNDOFF, bar_fourbar_builder, circle_intersection, ctrl_c_after,
                      fourbar_builder)
from test_elements import E, W, closed_form, slider_crank


def test_slider_crank_closed_form():
    t = np.linspace(0.0, 2.0, 801)
    r = kinematics(slider_crank(), t)
    expected = np.array([closed_form(tt) for tt in t])
    assert np.abs(r.marker("B")[:, 0] - expected[:, 0]).max() <= 1e-10
    assert np.abs(r.marker("B")[:, 1] - E).max() <= 1e-10
    assert np.abs(r.marker_velocity("B")[:, 0] - expected[:, 1]).max() <= 1e-10
    assert np.abs(r.marker_acceleration("B")[:, 0] - expected[:, 2]).max() <= 1e-10
    # The crank angle is continuous through two turns and follows its law.
    np.testing.assert_allclose(r.body_angle("crank"), 0.4 + W * t, atol=1e-12)
    np.testing.assert_allclose(r.body_angular_velocity("crank"), W, atol=1e-12)
    np.testing.assert_allclose(r.body_angular_acceleration("crank"), 0.0, atol=1e-9)


def fourbar_closed_form(th2, w2, r2=0.1, r3=0.35, r4=0.3, d=0.4):
    A = r2 * np.array([math.cos(th2), math.sin(th2)])
    C = np.array([d, 0.0])
    dv = C - A
    dist = np.linalg.norm(dv)
    a = (r3**2 - r4**2 + dist**2) / (2 * dist)
    h = math.sqrt(r3**2 - a**2)
    B = A + a * dv / dist + h * np.array([-dv[1], dv[0]]) / dist
    th3 = math.atan2(*(B - A)[::-1])
    th4 = math.atan2(*(B - C)[::-1])
    M = np.array([[-r3 * math.sin(th3), r4 * math.sin(th4)],
                  [r3 * math.cos(th3), -r4 * math.cos(th4)]])
    w3, w4 = np.linalg.solve(M, [r2 * w2 * math.sin(th2), -r2 * w2 * math.cos(th2)])
    rhs = [r2 * w2**2 * math.cos(th2) + r3 * w3**2 * math.cos(th3) - r4 * w4**2 * math.cos(th4),
           r2 * w2**2 * math.sin(th2) + r3 * w3**2 * math.sin(th3) - r4 * w4**2 * math.sin(th4)]
    a3, a4 = np.linalg.solve(M, rhs)
    return B, th3, th4, w3, w4, a3, a4


def test_fourbar_closed_form():
    b = fourbar_builder()
    # O_crank pins crank.a (first) to the ground (second): relative angle = -crank angle.
    b.add_angle_driver("motor", "O_crank", laws.linear(-1.0, -3.0))
    model = b.build()
    t = np.linspace(0.0, 2.0, 401)
    r = kinematics(model, t)
    for k in range(0, len(t), 20):
        B, th3, th4, w3, w4, a3, a4 = fourbar_closed_form(1.0 + 3.0 * t[k], 3.0)
        i = model.body_names.index("rocker")
        rocker_b = r.q[k, 4 * i:4 * i + 2] + 0.15 * r.q[k, 4 * i + 2:4 * i + 4]
        np.testing.assert_allclose(rocker_b, B, atol=1e-10)
        assert r.body_angle("coupler")[k] == pytest.approx(th3, abs=1e-10)
        assert r.body_angular_velocity("coupler")[k] == pytest.approx(w3, abs=1e-10)
        assert r.body_angular_velocity("rocker")[k] == pytest.approx(w4, abs=1e-10)
        assert r.body_angular_acceleration("coupler")[k] == pytest.approx(a3, abs=1e-9)
        assert r.body_angular_acceleration("rocker")[k] == pytest.approx(a4, abs=1e-9)


def derivative_errors(model, base_times, h=1e-5):
    """Largest relative differences between the sweep's v and a and central differences
    (+-h) of its positions and velocities around each base time."""
    t = np.sort(np.concatenate([base_times - h, base_times, base_times + h]))
    r = kinematics(model, t)
    qm, qp = r.q[0::3], r.q[2::3]
    vm, v0, vp = r.v[0::3], r.v[1::3], r.v[2::3]
    a0 = r.a[1::3]
    v_fd = (qp - qm) / (2 * h)
    a_fd = (vp - vm) / (2 * h)
    return (np.abs(v0 - v_fd).max() / np.abs(v0).max(),
            np.abs(a0 - a_fd).max() / np.abs(a0).max())


JOINTS = {"A": ("L1", "b"), "C": ("L2", "b"), "D": ("L4", "a"), "E": ("L6", "b"),
          "F": ("L8", "b"), "G": ("L10", "b")}
LEN = dict(zip([f"L{i}" for i in range(1, 12)],
               [0.150, 0.500, 0.415, 0.393, 0.619, 0.558, 0.401, 0.394, 0.367, 0.657, 0.491]))


def point(model, q, bar, end):
    i = model.body_names.index(bar)
    half = LEN[bar] / 2 * (1 if end == "b" else -1)
    return q[4 * i:4 * i + 2] + half * q[4 * i + 2:4 * i + 4]


def test_jansen_against_circle_intersections_and_differences():
    model = linkdyn.load_model("jansen_driven")
    t = np.linspace(0.0, 1.0, 1001)
    r = kinematics(model, t)
    P2 = np.array([0.380, -0.078])
    prev = {k: point(model, r.q[0], *v) for k, v in JOINTS.items()}
    for k in range(0, len(t), 10):
        th = -2 * math.pi * t[k]
        A = 0.15 * np.array([math.cos(th), math.sin(th)])
        C = circle_intersection(A, LEN["L2"], P2, LEN["L3"], prev["C"])
        D = circle_intersection(A, LEN["L5"], P2, LEN["L4"], prev["D"])
        E_ = circle_intersection(C, LEN["L6"], P2, LEN["L7"], prev["E"])
        F = circle_intersection(E_, LEN["L8"], D, LEN["L9"], prev["F"])
        G = circle_intersection(F, LEN["L10"], D, LEN["L11"], prev["G"])
        built = dict(A=A, C=C, D=D, E=E_, F=F, G=G)
        for name, (bar, end) in JOINTS.items():
            np.testing.assert_allclose(point(model, r.q[k], bar, end), built[name], atol=1e-10)
        prev = built
    # Velocities and accelerations against central differences (h = 1e-5 s: truncation
    # ~1e-10, round-off ~1e-11 relative).
    v_err, a_err = derivative_errors(model, np.linspace(0.005, 0.995, 100))
    assert v_err <= 1e-7 and a_err <= 1e-7
    assert max(np.linalg.norm(model.phi(q, tt)) for q, tt in zip(r.q, t)) <= 1e-12


# The ten-body linkage of Nurye's kinematic analysis report (built-in ten_body_linkage):
# its points in the initial configuration (the report's Table 1) and its actuators' laws.
NURYE = {k: np.array(v, dtype=float) for k, v in {
    "A": (0, 0), "B": (0.3, 0), "D": (0.2, 0.6), "E": (-0.1, 0.7), "F": (-0.2, 0.8),
    "G": (0, 1.2), "H": (0.5, 0.8), "I": (0.5, -0.1), "J": (0.7, 0.3), "K": (0.8, 0.6),
    "L": (1, -0.5), "M": (1.3, -0.3), "N": (1.3, 0)}.items()}


def nurye_shortening(t):
    """The report's actuator motions f(t), AD and BH: how much each actuator is shorter than
    in the initial configuration (m)."""
    return (0.05 - 0.08 * math.sin(math.pi * t + math.pi / 4),
            0.04 - 0.1 * math.sin(math.pi * t / 4 - math.pi / 3))


def rigid_image(p0, q0, p, q, point):
    """Where ``point`` of a plate goes when its points p0, q0 move to p, q."""
    a0, a = q0 - p0, q - p
    ang = math.atan2(a[1], a[0]) - math.atan2(a0[1], a0[0])
    c, s_ = math.cos(ang), math.sin(ang)
    d = point - p0
    return p + np.array([c * d[0] - s_ * d[1], s_ * d[0] + c * d[1]])


def nurye_dyads(t, prev):
    """Positions of the ten-body linkage at time t by closing its loops one dyad at a time:
    D from the ground pivots E and A (plate C1 about E, actuator AD of length |AD|0 - f1), H
    from G and B (plate C2, actuator BH), I from F and J (plates C7, C8), N from L and K
    (plates C10, C9)."""
    P = NURYE
    d = lambda a, b: float(np.linalg.norm(P[a] - P[b]))
    f1, f2 = nurye_shortening(t)
    D = circle_intersection(P["E"], d("E", "D"), P["A"], d("A", "D") - f1, prev["D"])
    F = rigid_image(P["E"], P["D"], P["E"], D, P["F"])
    G = rigid_image(P["E"], P["D"], P["E"], D, P["G"])
    H = circle_intersection(G, d("G", "H"), P["B"], d("B", "H") - f2, prev["H"])
    J = rigid_image(P["G"], P["H"], G, H, P["J"])
    I_ = circle_intersection(F, d("F", "I"), J, d("J", "I"), prev["I"])
    K = rigid_image(P["J"], P["I"], J, I_, P["K"])
    L = rigid_image(P["F"], P["I"], F, I_, P["L"])
    N = circle_intersection(L, d("L", "N"), K, d("K", "N"), prev["N"])
    c10 = rigid_image(P["L"], P["N"], L, N, np.array([1.2, -0.25]))
    return {"D": D, "H": H, "I": I_, "N": N, "K": K, "c10": c10}


def test_ten_body_linkage_against_its_dyads_and_differences():
    model = linkdyn.load_model("ten_body_linkage")
    assert model.nbody == 10 and model.nq == model.nc
    t = np.linspace(0.0, 5.0, 501)
    r = kinematics(model, t)
    prev = dict(NURYE)
    for i, tt in enumerate(t):
        exact = nurye_dyads(tt, prev)
        prev = exact
        assert np.linalg.norm(r.marker("K")[i] - exact["K"]) <= 1e-12
        assert np.linalg.norm(r.marker("c10")[i] - exact["c10"]) <= 1e-12
    # The actuators' lengths follow the report's laws.
    def world(body, point, centre):
        local = NURYE[point] - np.array(centre)
        th = r.body_angle(body)
        return r.body_position(body) + np.column_stack(
            [np.cos(th) * local[0] - np.sin(th) * local[1],
             np.sin(th) * local[0] + np.cos(th) * local[1]])

    A, D = world("C4", "A", (0.05, 0.15)), world("C3", "D", (0.15, 0.45))
    f1 = np.array([nurye_shortening(tt)[0] for tt in t])
    np.testing.assert_allclose(np.linalg.norm(D - A, axis=1),
                               np.linalg.norm(NURYE["D"] - NURYE["A"]) - f1, atol=1e-12)
    v_err, a_err = derivative_errors(model, np.linspace(0.01, 4.99, 100))
    assert v_err <= 1e-7 and a_err <= 1e-7
    norms = np.array([model.constraint_norms(q, v, tt) for q, v, tt in zip(r.q, r.v, t)])
    assert norms[:, 0].max() <= 1e-13 and norms[:, 1].max() <= 1e-12
    assert not r.singularities


def test_fourbar_driven_into_dead_centre():
    # Drive the rocker of the crank-rocker: its extreme, where crank and coupler line up
    # (|OB| = crank + coupler), is a dead centre beyond which no position exists.
    r2, r3, r4, d = 0.1, 0.35, 0.3, 0.4
    b = fourbar_builder()
    phi0 = math.atan2(*(fourbar_closed_form(1.0, 0.0)[0] - np.array([d, 0.0]))[::-1])
    # C_rocker pins ground.C (first) to rocker.a (second): relative angle = rocker angle.
    rate = -0.5
    b.add_angle_driver("rocker_drive", "C_rocker", laws.linear(phi0, rate))
    model = b.build()
    phi_star = math.acos(((r2 + r3) ** 2 - d**2 - r4**2) / (2 * d * r4))
    candidates = [phi_star, -phi_star]
    t_star = min(((p - phi0) / rate for p in candidates if (p - phi0) / rate > 0))
    t = np.arange(0.0, t_star + 0.02, 0.001)
    with pytest.raises(SingularConfigurationError) as info:
        kinematics(model, t)
    err = info.value
    assert err.t == pytest.approx(t_star, abs=1e-6)
    assert "rocker_drive" in err.constraints
    # The message groups the rows by element, the driver first.
    assert "(involved: driver rocker_drive; joints " in str(err)
    assert "the unit vectors of" in str(err)
    assert err.result.t[-1] < t_star and len(err.result.t) > 10


def test_mobility_is_checked_up_front(fourbar):
    with pytest.raises(ModelError, match="under-driven: 1 degree of freedom and 0 drivers"):
        kinematics(fourbar, [0.0, 1.0])
    b = fourbar_builder()
    b.add_angle_driver("m1", "O_crank", laws.constant(-1.0))
    b.add_angle_driver("m2", "C_rocker", laws.constant(2.0))
    with pytest.raises(ModelError, match="over-driven: 1 degree of freedom and 2 drivers"):
        kinematics(b.build(), [0.0, 1.0])


def test_bad_arguments():
    model = slider_crank()
    with pytest.raises(ValueError, match="times must increase: times\\[2\\]"):
        kinematics(model, [0.0, 0.2, 0.1])
    with pytest.raises(ValueError, match="on_singular"):
        kinematics(model, [0.0, 0.1], on_singular="ignore")
    with pytest.raises(ValueError, match="non-empty"):
        kinematics(model, [])


def driven_slider_crank(law):
    b = linkdyn.ModelBuilder("sc")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("S", (0.0, 0.0))
    b.add_bar("crank", length=0.1, density=1.0, position=(0.05, 0.0))
    b.add_bar("rod", length=0.3, density=1.0, position=(0.25, 0.0))
    b.add_body("slider", mass=0.5, inertia=0.01, position=(0.4, 0.0))
    b.add_revolute("pivot", "ground.O", "crank.a")
    b.add_revolute("pin", "crank.b", "rod.a")
    b.add_revolute("wrist", "rod.b", "slider.cm")
    b.add_prismatic("guide", "ground.S", "slider.cm")
    b.add_angle_driver("motor", "pivot", law)
    return b.build()


def test_function_law_matches_the_same_polynomial():
    # theta = 0.2 + 3 t + 0.5 t^2 as a polynomial law and as a Python function.
    poly = driven_slider_crank(laws.polynomial(0.2, 3.0, 0.5))
    func = driven_slider_crank(laws.function(lambda t: (0.2 + 3 * t + 0.5 * t * t, 3 + t, 1.0)))
    t = np.linspace(0.0, 2.0, 201)
    a, b = kinematics(poly, t), kinematics(func, t)
    np.testing.assert_allclose(b.q, a.q, atol=1e-13)
    np.testing.assert_allclose(b.v, a.v, atol=1e-12)
    np.testing.assert_allclose(b.a, a.a, atol=1e-10)


def test_function_laws_are_refused_where_they_cannot_work(tmp_path):
    func = driven_slider_crank(laws.function(lambda t: (3 * t, 3.0, 0.0)))
    with pytest.raises(ModelError, match="driver 'motor': its law is a Python function"):
        linkdyn.simulate(func, 1.0)
    with pytest.raises(ModelError, match="cannot be written to a model file"):
        func.save(tmp_path / "x.json")
    bad = driven_slider_crank(laws.function(lambda t: (3 * t, float("nan"), 0.0)))
    with pytest.raises(ModelError, match="driver 'motor': law function returned .* at t = 0.0"):
        kinematics(bad, [0.0, 0.1])
    with pytest.raises(ModelError, match="needs a callable"):
        laws.function(3.0)


def test_velocities_and_accelerations_take_the_solutions_factors():
    """v and a are solved with the factors made at each solution (for its sign and
    condition): fresh, so iterative refinement confirms them after one solve each, or
    one more, not the two or three more each that Newton's factors from the predictor
    took. Work counter of the compiled sweep over 361 positions of the Jansen linkage."""
    from linkdyn._kinematics import KinematicSweep

    model = linkdyn.load_model("jansen_driven")
    t = np.linspace(0.0, 1.0, 361)
    q0 = kinematics(model, t[:1]).q[0]
    out = [np.empty((len(t), model.nq)) for _ in range(3)] + [
        np.empty(len(t)), np.zeros(len(t), dtype=np.int8)]
    sweep = KinematicSweep(model.kernels.run_state())
    status, done = sweep.sweep(t, q0, *out)
    assert status == 0 and done == len(t)
    assert sweep.solves <= 3.5 * len(t)          # (2.5 here; 6.2 with Newton's factors)
    r = kinematics(model, t)
    for x, y in ((out[1], r.v), (out[2], r.a)):
        np.testing.assert_allclose(x, y, rtol=0.0, atol=1e-12 * np.abs(y).max())


def test_ctrl_c_interrupts_a_long_sweep(monkeypatch):
    # Ctrl-C 20 ms into the compiled sweep (not 0.3 s into the call: under the sanitizers
    # the 3,000,001 times' tables took longer than that, and the Ctrl-C came before the
    # sweep, a KeyboardInterrupt in Python)
    import signal

    import linkdyn.solve.tracking as solve

    class Interrupted(solve.KinematicSweep):
        def sweep(self, *args):
            with ctrl_c_after(0.02):
                return super().sweep(*args)

    monkeypatch.setattr(solve, "KinematicSweep", Interrupted)
    model = slider_crank()
    t = np.linspace(0.0, 2000.0, 3_000_001)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = kinematics(model, t)
    assert r.status == "interrupted" and 0 < len(r.t) < len(t)
    assert any("interrupted" in str(w.message) for w in caught)
    x = np.array([closed_form(tt)[0] for tt in r.t[-5:]])
    np.testing.assert_allclose(r.marker("B")[-5:, 0], x, atol=1e-10)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_pressed_in_python_during_a_sweep_is_not_lost():
    """A Ctrl-C pressed while Python runs inside kinematics (here a law given as a Python
    function, from a finaliser, where Python's KeyboardInterrupt would be dropped) stops the
    analysis with the rows it has: status "interrupted", not a run to the end."""
    from conftest import ctrl_c_in_a_finaliser

    pressed = []

    def law(t):
        if not pressed:
            pressed.append(t)
            ctrl_c_in_a_finaliser()
        return 3.0 * t, 3.0, 0.0

    model = driven_slider_crank(laws.function(law))
    t = np.linspace(0.0, 2.0, 201)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = kinematics(model, t)
    assert pressed and r.status == "interrupted" and 0 < len(r.t) <= len(t)
    assert np.all(np.isfinite(r.q)) and any("interrupted" in str(w.message) for w in caught)
    assert caught[0].filename == __file__       # the warning points at the caller
    import signal
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_no_loop_reported_is_handed_to_python():
    """The compiled loops' Ctrl-C handler (src/linkdyn/_interrupt.h), driven through its
    capsule: a Ctrl-C that arrives after a loop's last look at the flag (here: the flag set
    by hand between enter() and leave()) becomes a KeyboardInterrupt in Python when the
    last loop leaves; the next enter() cleared it before, and a CI run of the walker's
    storm of events lost one that way. A Ctrl-C a loop reported is not raised again, and
    stays set for the other loops running."""
    import ctypes
    import signal

    from linkdyn import _kernels

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

    class Api(ctypes.Structure):     # linkdyn_interrupt; PYFUNCTYPE: called with the GIL
        _fields_ = [("flag", ctypes.POINTER(ctypes.c_int)), ("enter", ctypes.PYFUNCTYPE(None)),
                    ("leave", ctypes.PYFUNCTYPE(None)),
                    ("reported", ctypes.POINTER(ctypes.c_int))]

    api = Api.from_address(get(_kernels.interrupt_api, b"linkdyn._kernels.interrupt_api"))
    api.enter()
    api.flag[0] = 1
    with pytest.raises(KeyboardInterrupt):
        api.leave()
        for _ in range(10_000):     # Python's next check
            pass
    api.enter()
    api.enter()                     # two loops running (two threads)
    api.flag[0] = 1
    api.reported[0] = 1             # one stopped for it and reported it
    api.leave()
    assert api.flag[0] == 1         # the other still sees it
    api.leave()
    for _ in range(10_000):
        pass
    assert api.flag[0] == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_function_laws_in_threads_do_not_interfere():
    # Two sweeps of one model with a Python-function law, run at once in two threads with
    # different time grids: each equals the same sweep run alone (the law values belong to
    # the run, not to the model).
    import threading

    func = driven_slider_crank(laws.function(lambda t: (0.2 + 3 * t + 0.5 * t * t, 3 + t,
                                                        1.0)))
    grids = [np.linspace(0.0, 2.0, 4001), np.linspace(0.5, 1.5, 4001)]
    alone = [kinematics(func, g) for g in grids]
    for _ in range(3):
        out = [None, None]

        def work(i):
            out[i] = kinematics(func, grids[i])

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for i in range(2):
            np.testing.assert_array_equal(out[i].q, alone[i].q)
            assert not out[i].singularities


def test_parallelogram_change_point_sampled_exactly_is_reported():
    """A parallelogram four-bar whose crank reaches the ground line at t = 1 s exactly (all
    bars collinear: its change point). The constraint residuals are compensated sums
    (_kernels.pyx), so Newton lands on the singular configuration to round-off and the
    condition estimate there is round-off too (measured 1e-17): the default threshold reports
    it, and only there."""
    b = bar_fourbar_builder("parallelogram", crank=0.5, coupler=1.0, rocker=0.5)
    # The relative angle of joint A is -(crank angle): the crank turns from pi/2 to pi.
    b.add_angle_driver("drive", "A", laws.linear(-math.pi / 2, -math.pi / 2))
    model = b.build()
    k = kinematics(model, np.linspace(0.0, 1.5, 151), on_singular="continue")
    assert [s.t for s in k.singularities] == [1.0]
    assert k.singularities[0].rcond < 1e-12
    with pytest.raises(SingularConfigurationError, match="t = 1 s"):
        kinematics(model, np.linspace(0.0, 1.5, 151))


def test_progress_of_a_sweep(monkeypatch):
    """progress(t, positions) during a compiled sweep: growing counts, times of solved rows,
    and the same result as without it."""
    import sys

    monkeypatch.setattr(sys.modules["linkdyn._progress"], "PERIOD", 0.001)
    model = linkdyn.load_model("jansen_driven")
    times = np.linspace(0.0, 20.0, 40001)
    calls = []
    k = kinematics(model, times, progress=lambda t, n: calls.append((t, n)))
    plain = kinematics(model, times)
    assert np.array_equal(k.q, plain.q)
    assert calls
    t, n = np.array(calls).T
    assert np.all(np.diff(n) >= 0) and n[-1] <= len(times)
    assert np.all(np.isin(t, times))
    with pytest.raises(ValueError, match="progress must be callable"):
        kinematics(model, times[:3], progress="yes")


def test_sweep_starts_from_the_guess_and_projects_only_a_bad_one():
    # From the model's guess at the first perturbation: the sweep's own Newton iteration, no
    # projection; from a guess too far for it: projected first, the same positions.
    model = linkdyn.load_model("stephenson2")
    times = np.linspace(0.0, 2 * np.pi, 181)[1:]
    r = linkdyn.kinematics(model, times)
    assert r.stats["newton_iterations"] < 3 * len(times)
    far = model.q0 + np.where(np.arange(model.nq) % 4 < 2, 0.8, 0.0)   # centres moved 0.8 m
    r2 = linkdyn.kinematics(model, times, q0=far)
    np.testing.assert_allclose(r2.q, r.q, atol=1e-10)
    # A guess the sweep cannot start from (a body's unit vector zero: a singular Jacobian)
    # goes to consistent_state, whose error names the trouble.
    bad = model.q0.copy()
    bad[2:4] = 0.0
    with pytest.raises(linkdyn.RedundantConstraintsError):
        linkdyn.kinematics(model, times, q0=bad)


def test_parallelogram_passes_its_change_point_on_its_branch_and_reports_it():
    """Sampled off the change point, the crank's step across it changes the sign of det
    Phi_q on the parallelogram's own branch: sub-steps confirm the change (not a jump), the
    change is reported within 2**-8 of a step of t = 1 s, and the four-bar stays a
    parallelogram (rocker parallel to crank) after it."""
    b = bar_fourbar_builder("parallelogram", crank=0.5, coupler=1.0, rocker=0.5)
    b.add_angle_driver("drive", "A", laws.linear(-math.pi / 2, -math.pi / 2))
    model = b.build()
    for n in (137, 152):
        t = np.linspace(0.0, 1.5, n)
        k = kinematics(model, t, on_singular="continue")
        assert len(k.t) == n and len(k.branch_changes) == 1
        assert abs(k.branch_changes[0] - 1.0) <= (t[1] - t[0]) / 2**8
        np.testing.assert_allclose(k.body_angle("rocker"), k.body_angle("crank"), atol=1e-9)
    # Sampled exactly on it (t = 1 s), the sample is singular (Newton there converges to about
    # the square root of its tolerance) and gives the next step no tangent: the sweep steps
    # over it from the sample before, and stays a parallelogram.
    t = np.linspace(0.0, 1.5, 151)
    k = kinematics(model, t, on_singular="continue")
    assert [s.t for s in k.singularities] == [1.0] and len(k.branch_changes) == 1
    assert abs(k.branch_changes[0] - 1.0) <= (t[1] - t[0]) / 2**8
    gap = np.abs(k.body_angle("rocker") - k.body_angle("crank"))
    assert gap[100] < 1e-8 and np.delete(gap, 100).max() < 1e-12


def _reflect(p, a, b):
    """Points p (n, 2) mirrored across the lines through a and b (n, 2 each)."""
    d = (b - a) / np.linalg.norm(b - a, axis=1)[:, None]
    w = p - a
    return a + 2 * np.einsum("ij,ij->i", w, d)[:, None] * d - w


def test_assembly_modes_of_a_four_bar_and_a_sweep_on_the_other_one():
    """A four-bar has two assembly modes at a crank angle, C mirrored across the line B-D;
    the solutions with the crank half a turn away (its driver row is a sine) are not modes.
    A sweep started on the second mode stays on it over a full turn."""
    from linkdyn.geometric import Linkage

    g = Linkage("fourbar")
    cx = 11.0 / 3.0
    for name, p in (("A", (0.0, 0.0)), ("B", (1.0, 0.0)), ("C", (cx, (9 - (4 - cx)**2)**0.5)),
                    ("D", (4.0, 0.0))):
        g.revolute(name, p)
    for name, p in (("Bm", (1.0, 0.0)), ("Cm", (cx, (9 - (4 - cx)**2)**0.5))):
        g.coupler(name, p)          # markers at B (on the crank) and C (on the rocker)
    g.link("crank", ["A", "B", "Bm"])
    g.link("coupler", ["B", "C"])
    g.link("rocker", ["C", "D", "Cm"])
    g.link("base", ["A", "D"], ground=True)
    g.input("A")
    model = g.build()
    modes = linkdyn.assembly_modes(model)
    assert len(modes) == 2 and {m.sign for m in modes} == {-1, 1}
    np.testing.assert_array_equal(modes[0].q, linkdyn.kinematics(model, [0.0]).q[0])
    P = [model.marker_positions(m.q) for m in modes]
    B, C = model.marker_names.index("Bm"), model.marker_names.index("Cm")
    D = np.array([[4.0, 0.0]])
    np.testing.assert_allclose(P[1][C], _reflect(P[0][[C]], P[0][[B]], D)[0], atol=1e-12)
    np.testing.assert_allclose(P[1][B], P[0][B], atol=ROUNDOFF)
    t = np.linspace(0.0, 2 * math.pi, 181)
    first = linkdyn.kinematics(model, t)
    second = linkdyn.kinematics(model, t, q0=modes[1].q)
    np.testing.assert_allclose(second.marker("Cm"),
                               _reflect(first.marker("Cm"), first.marker("Bm"),
                                        np.tile(D, (len(t), 1))), atol=1e-11)
    # Modes of the built-in crank-rocker: the same two.
    assert len(linkdyn.assembly_modes(linkdyn.load_model("crank_rocker"))) == 2


def test_assembly_modes_of_spherical_linkages_and_their_errors():
    for name, count in (("spherical_rrpr", 2), ("spherical_watt1", 4)):
        model = linkdyn.load_model(name)
        modes = linkdyn.assembly_modes(model, t=0.3)
        assert len(modes) == count
        for m in modes:
            assert np.abs(model.phi(m.q, 0.3)).max() < 1e-13
            assert np.all(model.orientation_cosines(m.q, 0.3) > 0.99)
        for i in range(count):
            for j in range(i):
                assert np.abs(modes[i].q - modes[j].q).max() > 1e-3
        # Each mode is where a sweep from it stays: its first row.
        r = linkdyn.kinematics(model, [0.3, 0.31], q0=modes[-1].q)
        np.testing.assert_allclose(r.q[0], modes[-1].q, atol=1e-13)
    with pytest.raises(linkdyn.ModelError, match="fully driven"):
        linkdyn.assembly_modes(linkdyn.load_model("jansen"))


@pytest.mark.parametrize("n", [2, 3, 5, 6, 11, 41])
def test_coarse_times_give_the_positions_of_fine_ones(n):
    """Times too far apart for one Newton step from the Taylor predictor: every half turn
    of the Jansen crank (n = 5) the positions came out on another assembly mode, 2 m off
    and silently; every 0.4 turn (n = 6) a limit position was reported where there is none.
    The sweep now cuts such steps into sub-steps (stats["sub_steps"]) and gives, at the
    times asked for, the positions and velocities of a sweep with a thousand steps a turn
    (measured within 1e-14 m and 1e-13 m/s)."""
    model = linkdyn.load_model("jansen_driven")          # the crank turns once a second
    times = np.linspace(0.0, 2.0, n)
    grid = np.union1d(np.linspace(0.0, 2.0, 2001), times)
    fine = linkdyn.kinematics(model, grid)
    rows = np.searchsorted(grid, times)
    r = linkdyn.kinematics(model, times)
    assert np.abs(r.q - fine.q[rows]).max() < 1e-10
    assert np.abs(r.v - fine.v[rows]).max() < 1e-9
    assert (r.stats["sub_steps"] > 0) == (n < 41)        # 41: steps of 18 degrees suffice
    assert fine.stats["sub_steps"] == 0


def test_times_far_too_coarse_for_the_motion_are_named_and_bounded():
    """A crank turning at 1e12 rad/s sampled a second apart: the sub-steps it would take
    (motion / STEP_MOTION, 10^12 and more a step) were allocated as given, and a fuzzed
    linkage whose velocities overflowed asked for 10^18 of them, until the process was
    killed for its memory. The sub-steps are now bounded (MAX_CUTS a step, MAX_SUB_STEPS in
    all) and the sweep says that its times are too far apart, not that the Jacobian is
    singular. A crank at 1 rad/s on the same times is followed."""
    import resource

    from linkdyn.models.linkages import four_bar

    points = {"A": (0.0, 0.0), "B": (0.1, 0.02), "C": (0.32, 0.3), "D": (0.4, 0.0),
              "P": (0.25, 0.37)}
    fast = four_bar(points)
    fast.input("A", rate=1e12)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(linkdyn.KinematicsError, match="times are too far apart to follow") \
            as info:
        kinematics(fast.build(), [0.0, 1.0, 2.0])
    assert not isinstance(info.value, SingularConfigurationError)
    # the peak memory grew by less than 200 MB (kB on Linux)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000
    assert kinematics(four_bar(points).build(), [0.0, 1.0, 2.0]).t.size == 3


def test_times_that_are_not_numbers_are_refused_by_name():
    with pytest.raises(linkdyn.ArgumentError, match="times must be an array of times"):
        linkdyn.kinematics("jansen_driven", "abc")
