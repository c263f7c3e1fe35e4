"""Kinematic sensitivities (linkdyn.design.sensitivity): a four-bar's coupler point against
its closed-form position analysis differentiated by hand, velocities and accelerations
against differences of whole analyses, planar and geometric and spatial models, parameters
that enter non-affinely, and bad parameters named in the error."""
import math

import numpy as np
import pytest

import linkdyn
from linkdyn import laws
from linkdyn.design.sensitivity import ParameterFamily, kinematic_sensitivities
from linkdyn.errors import ArgumentError, ModelError
from conftest import ROUNDOFF, circle_intersection

R2, R3, R4, D, XI, ETA, W = 0.1, 0.35, 0.3, 0.4, 0.05, 0.12, 3.0
PARAMS = ["bodies.crank.length", "bodies.coupler.length", "bodies.rocker.length",
          "ground.D.x", "bodies.coupler.points.P.y"]


def fourbar():
    """A crank-rocker from bars: crank r2 about O, coupler r3, rocker r4 about D = (d, 0),
    coupler point P at (xi, eta) in the coupler's frame (centre, along B -> C)."""
    th, (B, C) = closed_form(1.0, R2, R3, R4, D)
    b = linkdyn.ModelBuilder("fourbar", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("D", (D, 0.0))
    b.add_bar("crank", length=R2, density=1.0, position=tuple(B / 2), angle=th)
    u = (C - B) / R3
    b.add_bar("coupler", length=R3, density=1.0, position=tuple((B + C) / 2),
              angle=math.atan2(u[1], u[0]), points={"P": (XI, ETA)})
    w = (C - np.array([D, 0.0])) / R4
    b.add_bar("rocker", length=R4, density=1.0, position=tuple((C + np.array([D, 0.0])) / 2),
              angle=math.atan2(w[1], w[0]))
    b.add_revolute("O_crank", "crank.a", "ground.O")
    b.add_revolute("B", "crank.b", "coupler.a")
    b.add_revolute("C", "coupler.b", "rocker.b")
    b.add_revolute("D_rocker", "rocker.a", "ground.D")
    # O_crank pins crank.a (first) to the ground: the relative angle is -(crank angle).
    b.add_angle_driver("motor", "O_crank", laws.linear(-th, -W))
    b.add_marker("P", "coupler.P")
    return b.build()


def closed_form(th, r2, r3, r4, d):
    """The crank's angle and the pins B, C (C above the line from B to D)."""
    B = r2 * np.array([math.cos(th), math.sin(th)])
    Dp = np.array([d, 0.0])
    above = B + np.array([-(Dp - B)[1], (Dp - B)[0]])
    return th, (B, circle_intersection(B, r3, Dp, r4, above))


def coupler_point_and_derivatives(th):
    """P and dP/d(r2, r3, r4, d, eta) by hand: B = r2 (cos, sin); C from |C - B| = r3,
    |C - D| = r4, differentiated: (C - B).(dC - dB) = r3 dr3, (C - D).(dC - dD) = r4 dr4;
    P = (B + C)/2 + xi u + eta perp(u) with u = (C - B)/r3."""
    _, (B, C) = closed_form(th, R2, R3, R4, D)
    Dp = np.array([D, 0.0])
    u = (C - B) / R3
    perp = lambda x: np.array([-x[1], x[0]])
    P = (B + C) / 2 + XI * u + ETA * perp(u)
    M = np.array([C - B, C - Dp])
    out = []
    for k in range(5):
        dB = np.array([math.cos(th), math.sin(th)]) if k == 0 else np.zeros(2)
        dr3 = 1.0 if k == 1 else 0.0
        dr4 = 1.0 if k == 2 else 0.0
        dD = np.array([1.0, 0.0]) if k == 3 else np.zeros(2)
        rhs = np.array([R3 * dr3 + (C - B) @ dB, R4 * dr4 + (C - Dp) @ dD])
        dC = np.linalg.solve(M, rhs)
        du = (dC - dB) / R3 - (C - B) * dr3 / R3**2
        # A bar's coupler point is fixed in its frame: the frame's origin is the bar's
        # centre, so changing its length moves the ends, not P's local coordinates.
        dP = (dB + dC) / 2 + XI * du + ETA * perp(du) + (perp(u) if k == 4 else 0.0)
        out.append(dP)
    return P, np.stack(out, axis=1)


def test_fourbar_coupler_point_against_the_closed_form_differentiated_by_hand():
    t = np.linspace(0.0, 2.0, 81)
    s = kinematic_sensitivities(fourbar(), PARAMS, t)
    assert all(s.exact)          # lengths and points enter the constraints affinely
    dP = s.marker("P")
    for i, ti in enumerate(t):
        P, exact = coupler_point_and_derivatives(1.0 + W * ti)
        np.testing.assert_allclose(s.model.marker_positions(s.q[i])[0], P, atol=1e-12)
        np.testing.assert_allclose(dP[i], exact, atol=1e-11)


def test_derivatives_formed_in_the_analysis_sweep_follow_its_sub_steps():
    """Every time asked for: the derivatives are formed in the analysis' own sweep. At
    times 0.4 of a crank turn apart the sweep solves sub-steps between them (rows it then
    drops); the rows kept carry their own derivatives: the closed form, and those of a
    second sweep over the same rows (``at``) to round-off."""
    t = np.arange(0.0, 8.0, 0.8)                  # 2.4 rad of crank a step
    assert linkdyn.kinematics(fourbar(), t).stats["sub_steps"] > 0
    s = kinematic_sensitivities(fourbar(), PARAMS, t)
    again = kinematic_sensitivities(fourbar(), PARAMS, t, at=t)
    dP = s.marker("P")
    for i, ti in enumerate(t):
        np.testing.assert_allclose(dP[i], coupler_point_and_derivatives(1.0 + W * ti)[1],
                                   atol=1e-11)
    for x, y in ((s.dq, again.dq), (s.dv, again.dv), (s.da, again.da)):
        np.testing.assert_allclose(x, y, rtol=0.0, atol=1e-10 * np.abs(y).max())


def test_derivatives_follow_the_analysis_through_reversals_at_limits():
    """A non-Grashof four-bar's crank rocks (at_limit="reverse"): the rows solved after
    each reversal carry their derivatives too, against central differences of whole
    reversed analyses away from the limits (where the positions move as sqrt(t - t_lim)
    and the differences of the limits' shifts dominate)."""
    from conftest import triple_rocker_linkage

    names = ["joints.C.coordinates.x", "joints.D.coordinates.y"]
    times = np.linspace(0.0, 10.0, 1001)
    s = kinematic_sensitivities(triple_rocker_linkage(), names, times, at_limit="reverse")
    family = ParameterFamily(triple_rocker_linkage(), names)
    limits = [k for _, k in linkdyn.kinematics(family.base, times, at_limit="reverse").limits]
    assert len(limits) == 3 and len(s.t) == len(times)
    away = np.ones(len(times), dtype=bool)
    for k in limits:
        away[max(0, k - 20):k + 20] = False
    for j in range(len(names)):
        runs = [linkdyn.kinematics(family.model(family.values + step * np.eye(2)[j]), times,
                                   at_limit="reverse") for step in (1e-6, -1e-6)]
        fd = (runs[0].q - runs[1].q) / 2e-6      # (they agree to 3e-11 here)
        np.testing.assert_allclose(s.dq[away, :, j], fd[away], rtol=0.0,
                                   atol=1e-7 * np.abs(fd[away]).max())
    # (times that repeat cannot name rows: ``at`` is refused with the reason)
    with pytest.raises(ArgumentError, match="go back and forth"):
        kinematic_sensitivities(triple_rocker_linkage(), names, times, at=[0.3],
                                at_limit="reverse")


@pytest.mark.parametrize("every_time", [True, False])
def test_derivatives_at_a_singular_sample_are_nan(every_time):
    """A parallelogram four-bar sampled exactly at its change point (t = 1 s), analysed
    with on_singular="continue": Phi_q has no inverse there and the derivatives do not
    exist: NaN (they were round-off, 3e7 and 1.6e16). Elsewhere they are finite, as large
    as the approach to the change point makes them."""
    from conftest import bar_fourbar_builder

    b = bar_fourbar_builder("parallelogram", crank=0.5, coupler=1.0, rocker=0.5)
    b.add_angle_driver("drive", "A", laws.linear(-math.pi / 2, -math.pi / 2))
    t = np.linspace(0.0, 1.5, 151)
    s = kinematic_sensitivities(b.build(), ["bodies.coupler.length"], t,
                                at=None if every_time else t, on_singular="continue")
    bad = np.flatnonzero(np.isnan(s.dq).any(axis=(1, 2)))
    assert list(bad) == [100] and s.t[100] == 1.0
    assert np.isnan(s.dv[100]).all() and np.isnan(s.da[100]).all()
    assert np.all(np.isfinite(np.delete(s.dq, 100, axis=0)))
    with pytest.raises(linkdyn.SingularConfigurationError, match="t = 1 s"):
        kinematic_sensitivities(b.build(), ["bodies.coupler.length"], t)


def test_an_unknown_option_is_named():
    with pytest.raises(linkdyn.errors.ArgumentTypeError, match="unknown option.*'foo'"):
        kinematic_sensitivities(fourbar(), PARAMS, np.linspace(0.0, 1.0, 5), foo=1)


def whole_run_differences(model_source, params, times, marker, h=1e-6):
    """d(marker position, velocity, acceleration)/dp by central differences of whole
    analyses of the models compiled at p +- h."""
    family = ParameterFamily(model_source, params)
    out = []
    for j in range(len(params)):
        runs = []
        for sign in (1, -1):
            values = family.values.copy()
            values[j] += sign * h * max(1.0, abs(values[j]))
            runs.append(linkdyn.kinematics(family.model(values), times))
        step = 2 * h * max(1.0, abs(family.values[j]))
        out.append([(getattr(runs[0], f)(marker) - getattr(runs[1], f)(marker)) / step
                    for f in ("marker", "marker_velocity", "marker_acceleration")])
    return out


@pytest.mark.parametrize("source, params, marker", [
    ("jansen_driven", ["bodies.L5.length", "ground.P2.x", "bodies.L2.length"], "foot"),
    ("jansen_driven", ["drivers.crank.law.rate"], "foot"),        # enters non-affinely
    ("ten_body_linkage", ["drivers.actuator_AD.law.b", "ground.E.y",
                          "bodies.C8.points.K.x"], "K"),
    # natural coordinates: the 5-SS spatial linkage and a spherical one, by their points
    ("five_ss", ["joints.J1.coordinates.x", "joints.J6.coordinates.z"], "J8"),
    ("spherical_rrpr", ["joints.J2.coordinates.y"], "J4"),
])
def test_velocities_and_accelerations_against_differences_of_whole_analyses(source, params,
                                                                            marker):
    times = np.linspace(0.0, 1.0, 41)
    s = kinematic_sensitivities(source, params, times)
    fd = whole_run_differences(source, params, times, marker)
    got = (s.marker(marker), s.marker_velocity(marker), s.marker_acceleration(marker))
    for j in range(len(params)):
        for k in range(3):
            scale = np.abs(fd[j][k]).max()
            # central differences of whole runs: truncation ~h^2, round-off ~1e-16/h
            assert np.abs(got[k][:, :, j] - fd[j][k]).max() <= 1e-6 * scale, (params[j], k)
    if params == ["drivers.crank.law.rate"]:
        assert s.exact == (False,)


def test_a_linkages_rows_are_differentiated_exactly_without_members(monkeypatch):
    """A spherical or spatial linkage's rows are polynomials in its joints' coordinates and
    in basis coordinates solved from them: their derivatives with respect to a joint
    coordinate come from the compile itself (one complex step each,
    linkdyn.compile.natural.parameter_kernels), exact, with no member compiled. The 5-SS's
    against closed forms at a generic state: a leg |J6 - J1|^2 = |J6_0 - J1_0|^2 (J1 on
    the ground), the actuator |J1 - J7|^2 = f^2 with f = L + t, L = |J1_0 - J7_0|, and the
    platform point J11 = J6 + B(q) B_0^-1 (J11_0 - J6_0), B = [u, w, u x w] of the basis
    triangle (J6, J7, J9)."""
    from linkdyn.compile.natural import parameter_kernels
    from linkdyn.models import linkage

    five = linkage("five_ss")
    model = five.build()
    X = {name: np.array(j.coordinates, dtype=float) for name, j in five.joints.items()}
    q = model.q0 + 0.05 * np.random.default_rng(3).standard_normal(model.nq)
    t, rows = 0.2, model.constraint_names

    def at(joint):
        k = model.coordinate_names.index(f"{joint}.x")
        return q[k:k + 3]

    names = ["joints.J6.coordinates.x", "joints.J1.coordinates.y", "joints.J7.coordinates.z",
             "joints.J11.coordinates.x"]
    derived = parameter_kernels(model, names)
    d6, d1, d7, d11 = (kernels.phi(q, t) for kernels, _ in derived)
    leg = rows.index("L1.J1-J6")
    assert d6[leg] == pytest.approx(-2.0 * (X["J6"] - X["J1"])[0], rel=1e-13)
    assert d1[leg] == pytest.approx(-2.0 * (at("J6") - X["J1"])[1]
                                    + 2.0 * (X["J6"] - X["J1"])[1], rel=1e-13)
    length = np.linalg.norm(X["J1"] - X["J7"])
    assert d7[rows.index("input")] == pytest.approx(
        -2.0 * (length + t) * (X["J7"] - X["J1"])[2] / length, rel=1e-13)

    def basis(p6, p7, p9):
        u, w = p7 - p6, p9 - p6
        return np.column_stack([u, w, np.cross(u, w)])
    expected = -basis(at("J6"), at("J7"), at("J9")) @ np.linalg.solve(
        basis(X["J6"], X["J7"], X["J9"]), [1.0, 0.0, 0.0])
    held = [rows.index(f"L6.J11.{x}") for x in "xyz"]
    np.testing.assert_allclose(d11[held], expected, rtol=0, atol=ROUNDOFF)
    # only the rows a coordinate enters: the held point's own, not the legs'
    assert np.count_nonzero(d11) == 3
    # a ground joint's marker moves with its own coordinates
    assert np.array_equal(derived[1][1][model.marker_names.index("J1")], [0.0, 1.0, 0.0])

    def no_members(*args, **kwargs):
        raise AssertionError("a member was compiled")
    monkeypatch.setattr(ParameterFamily, "shifted", no_members)
    s = kinematic_sensitivities(five, names, np.linspace(0.0, 0.5, 11))
    assert s.exact == (True,) * 4
    assert np.array_equal(s.marker("J1")[:, :, 1], np.tile([0.0, 1.0, 0.0], (11, 1)))


def test_a_planar_linkages_points_move_linearly_and_need_no_members(monkeypatch):
    """A planar linkage of revolute joints compiles to bodies whose points are the joints'
    coordinates about each body's origin, the mean of its joints', and to ground points
    at the ground joints' coordinates: linear in every joint coordinate. The sensitivities
    move those points by their exact derivatives in the model's own kernels (no member
    compiled), exact, and agree with fourth-order differences of whole analyses (measured
    8.5e-13 for the coordinates, 1.5e-12 for the coupler point's position, velocity and
    acceleration); a linkage with a prismatic joint (its line's foot point and angle are not
    linear) differences members as before."""
    from linkdyn.design import sensitivity as S
    from linkdyn.design.synthesis import linkage_parameters
    from linkdyn.models.linkages import four_bar, linkage

    fb = four_bar({"A": (0.0, 0.0), "B": (0.1, 0.02), "C": (0.32, 0.3), "D": (0.4, 0.0),
                   "P": (0.25, 0.37)})
    third = 1.0 / 3.0       # the coupler carries B, C and P
    moved = fb.point_derivatives("C", 1)
    assert set(moved) == {("coupler", "B"), ("coupler", "C"), ("coupler", "P"),
                          ("rocker", "C"), ("rocker", "D")}
    np.testing.assert_allclose(moved[("coupler", "C")], [0.0, 1.0 - third], rtol=ROUNDOFF)
    np.testing.assert_allclose(moved[("coupler", "P")], [0.0, -third], rtol=ROUNDOFF)
    assert fb.point_derivatives("A", 0) == {("ground", "A"): pytest.approx([1.0, 0.0]),
                                            ("crank", "A"): pytest.approx([0.5, 0.0]),
                                            ("crank", "B"): pytest.approx([-0.5, 0.0])}
    assert linkage("stephenson2").point_derivatives("J1", 0) is None      # a prismatic joint

    names, times = linkage_parameters(fb), np.linspace(0.0, 2 * np.pi, 41)
    family = ParameterFamily(fb, names)
    runs = {(j, k): linkdyn.kinematics(family.shifted(j, k * 1e-4), times)
            for j in range(len(names)) for k in (-2, -1, 1, 2)}

    def no_members(*args, **kwargs):
        raise AssertionError("a member was compiled")
    monkeypatch.setattr(S.ParameterFamily, "shifted", no_members)
    s = kinematic_sensitivities(fb, names, times)
    assert s.exact == (True,) * len(names)
    for j in range(len(names)):
        def fd(get):
            return (8 * (get(runs[j, 1]) - get(runs[j, -1]))
                    - (get(runs[j, 2]) - get(runs[j, -2]))) / 12e-4
        for get, mine in ((lambda r: r.q, s.dq), (lambda r: r.marker("P"), s.marker("P")),
                          (lambda r: r.marker_velocity("P"), s.marker_velocity("P")),
                          (lambda r: r.marker_acceleration("P"), s.marker_acceleration("P"))):
            ref = fd(get)
            assert np.abs(ref).max() > 1e-2, names[j]
            assert np.abs(mine[..., j] - ref).max() < 1e-9 * np.abs(ref).max(), names[j]


def slider_crank():
    """A crank OA (0.1 m) about O, a rod AB (0.3 m) and a slider at B on the line through G
    along x, the crank turned at 2 rad/s; a marker at the rod's middle."""
    b = linkdyn.ModelBuilder("slider_crank", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("G", (0.0, 0.0))
    b.add_bar("crank", length=0.1, density=1.0, position=(0.05, 0.0), angle=0.0)
    b.add_bar("rod", length=0.3, density=1.0, position=(0.25, 0.0), angle=0.0,
              points={"M": (0.0, 0.0)})
    b.add_body("slider", mass=0.2, inertia=1e-4, position=(0.4, 0.0), points={"B": (0.0, 0.0)})
    b.add_revolute("O", "crank.a", "ground.O")
    b.add_revolute("A", "crank.b", "rod.a")
    b.add_revolute("B", "rod.b", "slider.B")
    b.add_prismatic("slide", "ground.G", "slider.B")
    b.add_angle_driver("motor", "O", laws.linear(0.0, -2.0))
    b.add_marker("M", "rod.M")
    return b.build()


@pytest.mark.parametrize("names, members", [
    (["bodies.crank.length", "bodies.rod.length", "ground.O.y", "bodies.rod.points.M.x"],
     False),
    (["bodies.crank.length", "ground.G.y"], True),        # G is on the prismatic joint's line
])
def test_model_file_points_and_lengths_need_no_members(monkeypatch, names, members):
    """In a model file, a ground point's or a body point's coordinate and a bar's length
    move only points, linearly (a bar's ends at -+ length / 2): where those points are held
    by revolute joints and markers only, the sensitivities move them in the model's own
    kernels with no member compiled, and agree to round-off with the members' forward
    differences (exact too: the rows are affine in these parameters). A point on a
    prismatic joint's line enters that joint's generic rows: members then. The input
    torque's derivatives compile their members when asked for."""
    from linkdyn.design import derivative_sweep, sensitivity as S

    model, times = slider_crank(), np.linspace(0.0, 3.0, 61)
    compiled = []
    shifted = S.ParameterFamily.shifted
    monkeypatch.setattr(S.ParameterFamily, "shifted",
                        lambda self, j, step: compiled.append(j) or shifted(self, j, step))
    fast = kinematic_sensitivities(model, names, times)
    assert bool(compiled) is members
    monkeypatch.setattr(S, "_exact_sweep", lambda *args: None)
    slow = kinematic_sensitivities(model, names, times)
    assert fast.exact == slow.exact == (True,) * len(names)
    for x, y in ((fast.dq, slow.dq), (fast.dv, slow.dv), (fast.da, slow.da),
                 (fast.marker("M"), slow.marker("M")),
                 (fast.marker_acceleration("M"), slow.marker_acceleration("M"))):
        assert np.abs(y).max() > 1e-2
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-9 * np.abs(y).max())
    compiled.clear()
    tau = fast.input_torque("motor")
    assert compiled or members          # the kinetostatics' members, compiled now
    np.testing.assert_allclose(tau, slow.input_torque("motor"), rtol=0,
                               atol=1e-9 * np.abs(tau).max())
    moves = derivative_sweep._point_moves(S.ParameterFamily(model, names), model)
    assert (moves is None) is members


def test_a_relative_angle_driver_takes_the_central_differences_in_q():
    """A four-bar driven at its coupler pin (the coupler's angle relative to the crank's: a
    product of the two bodies' axis coordinates times cos and sin of the law). Its
    Phi_q v + Phi_t is quadratic in q, so the sweep takes the q-derivatives along dq by
    central differences; the driver at the ground pin (the other tests) leaves them affine
    and takes forward ones. Both exact: against differences of whole analyses."""
    from linkdyn.compile import compile_model
    from linkdyn.describe import modelfile
    from linkdyn.design.derivative_sweep import _affine_in_q

    base = fourbar()
    crank, coupler = (math.atan2(base.q0[4 * i + 3], base.q0[4 * i + 2]) for i in (0, 1))
    data = modelfile.to_dict(base.description)
    data["drivers"] = [{"type": "angle", "name": "motor", "joint": "B",
                        "law": {"law": "linear", "value": coupler - crank, "rate": 1.0}}]
    model = compile_model(modelfile.from_dict(data))
    assert _affine_in_q(model) == 0 and _affine_in_q(base) == 1
    params = ["bodies.crank.length", "ground.D.x", "bodies.coupler.points.P.y"]
    times = np.linspace(0.0, 0.5, 21)
    s = kinematic_sensitivities(model, params, times)
    fd = whole_run_differences(model, params, times, "P")
    got = (s.marker("P"), s.marker_velocity("P"), s.marker_acceleration("P"))
    for j in range(len(params)):
        for k in range(3):
            scale = np.abs(fd[j][k]).max()
            assert np.abs(got[k][:, :, j] - fd[j][k]).max() <= 1e-6 * scale, (params[j], k)


def test_geometric_linkage_joint_coordinates():
    from linkdyn.models.linkages import four_bar

    g = four_bar({"A": (0.0, 0.0), "B": (0.1, 0.0), "C": (0.3, 0.3), "D": (0.4, 0.0),
                  "P": (0.25, 0.35)})
    params = ["joints.B.coordinates.x", "joints.C.coordinates.y", "joints.P.coordinates.x"]
    times = np.linspace(0.0, 2 * np.pi, 73)
    s = kinematic_sensitivities(g, params, times)
    fd = whole_run_differences(g, params, times, "P")
    for j in range(3):
        assert np.abs(s.marker("P")[:, :, j] - fd[j][0]).max() <= 1e-6 * np.abs(fd[j][0]).max()


def test_body_angle_sensitivity_is_the_derivative_of_the_angle():
    times = np.linspace(0.0, 1.0, 21)
    s = kinematic_sensitivities("jansen_driven", ["bodies.L5.length"], times)
    family = ParameterFamily("jansen_driven", ["bodies.L5.length"])
    h = 1e-6
    up = linkdyn.kinematics(family.model(family.values + h), times).body_angle("L3")
    down = linkdyn.kinematics(family.model(family.values - h), times).body_angle("L3")
    np.testing.assert_allclose(s.body_angle("L3")[:, 0], (up - down) / (2 * h), atol=1e-7)


@pytest.mark.parametrize("params, error, match", [
    (["bodies.L55.length"], ModelError, "no body named 'L55'"),
    (["bodies.L5.lenght"], ModelError, r"has no field 'lenght' \(its fields: length, "),
    (["bodies.L1.points"], ModelError, "no field 'points'|not a number|ends at a number"),
    (["bodies.L5.velocity.x"], ArgumentError, "do not enter the kinematics or the kin"),
    (["ground.P9.x"], ModelError, "no ground point named 'P9'"),
    ("bodies.L5.length", linkdyn.ArgumentTypeError, "sequence of parameter paths"),
    ([], ArgumentError, "no parameters"),
])
def test_bad_parameters_are_named(params, error, match):
    with pytest.raises(error, match=match):
        kinematic_sensitivities("jansen_driven", params, [0.0, 0.1])


def test_sensitivities_of_a_spatial_body_model_against_whole_runs():
    """Spatial bodies in natural coordinates (the driven spatial slider-crank): a body point
    and a ground point as parameters, against central differences of whole analyses."""
    from linkdyn.design.sensitivity import ParameterFamily
    from linkdyn.models.spatial import spatial_slider_crank

    # the crank's point o lies on its axis (y = 0): moved off it, the member's Phi_q gains
    # entries the model's pattern leaves out, and each is evaluated in its own pattern
    names = ["bodies.crank.points.pin.x", "ground.line.z", "bodies.crank.points.o.y"]
    times = np.linspace(0.0, 1.0, 21)
    s = kinematic_sensitivities(spatial_slider_crank(), names, times)
    assert s.exact == (True, True, True)
    family = ParameterFamily(spatial_slider_crank(), names)
    assert family.shifted(2, 1e-3).kernels.phiq_nnz > family.base.kernels.phiq_nnz
    for j in range(3):
        h = 1e-6
        plus = linkdyn.kinematics(family.shifted(j, h), times).marker("S")
        minus = linkdyn.kinematics(family.shifted(j, -h), times).marker("S")
        fd = (plus - minus) / (2 * h)
        assert np.abs(fd).max() > 0.5
        # central differences of whole runs: truncation ~h^2, round-off ~1e-16/h
        assert np.abs(s.marker("S")[:, :, j] - fd).max() < 1e-8


def crank(length=0.4, density=2.0, omega=3.0):
    """A bar pinned at its end to the ground, turned at a constant rate under gravity: the
    motor holds the weight only, input torque -/+ m g (L / 2) cos(theta) with m = rho L."""
    b = linkdyn.ModelBuilder("crank", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("bar", length=length, density=density, position=(length / 2, 0.0), angle=0.0)
    b.add_revolute("pivot", "bar.a", "ground.O")
    b.add_angle_driver("motor", "pivot", laws.linear(0.0, -omega))
    return b.build()


def test_input_torque_sensitivity_of_a_crank_in_closed_form():
    from linkdyn.design import input_torque

    times = np.linspace(0.0, 2.0, 41)
    s = kinematic_sensitivities(crank(), ["bodies.bar.length", "bodies.bar.density"], times)
    k = linkdyn.kinematics(crank(), times)
    tau = input_torque(k, "motor")
    assert np.abs(tau).max() > 0.5
    d = s.input_torque("motor")
    # tau = -/+ rho g L^2 / 2 cos(theta): d/dL = 2 tau / L, d/drho = tau / rho
    np.testing.assert_allclose(d[:, 0], 2 * tau / 0.4, rtol=0, atol=1e-11)   # measured 4e-13
    np.testing.assert_allclose(d[:, 1], tau / 2.0, rtol=0, atol=1e-12)
    assert np.abs(s.dq[:, :, 1]).max() == 0.0    # the density moves no coordinate


def test_input_torque_sensitivity_of_a_fourbar_against_whole_analyses():
    """The crank-rocker above (bars with mass, turning at 3 rad/s): d(input torque)/dp
    against Richardson-extrapolated differences of whole kinetostatic analyses."""
    from linkdyn.design import input_torque
    from linkdyn.design.sensitivity import ParameterFamily

    names = ["bodies.coupler.length", "ground.D.x", "bodies.rocker.density"]
    times = np.linspace(0.0, 2.0, 41)
    s = kinematic_sensitivities(fourbar(), names, times)
    d = s.input_torque("motor")
    family = ParameterFamily(fourbar(), names)
    for j in range(len(names)):
        def tau(step):
            return input_torque(linkdyn.kinematics(family.shifted(j, step), times), "motor")
        h = 1e-3
        ref = (4 * (tau(h / 2) - tau(-h / 2)) / h - (tau(h) - tau(-h)) / (2 * h)) / 3
        assert np.abs(ref).max() > 1e-3
        # measured 4e-11, 1.4e-10 and 7e-13 of the scale (the reference's own error is
        # ~1e-10: its extrapolations over h and 2h differ by 5e-10 and 2e-9)
        assert np.abs(d[:, j] - ref).max() < 5e-9 * np.abs(ref).max()


def test_a_family_whose_affinity_is_known_compiles_one_member_per_parameter(monkeypatch):
    """The path a synthesis takes after its first analysis: parameters found affine need
    only their member at p + h (the forward difference from the base, exact for a residual
    affine in p), and the results agree with the full path's (central differences, the
    affinity tested) to round-off: positions, velocities, accelerations, markers and the
    input torque's derivatives, which are judged only when asked for."""
    from linkdyn.design import sensitivity as S

    names = ["bodies.coupler.length", "ground.D.x", "bodies.rocker.density"]
    times = np.linspace(0.0, 2.0, 41)
    compiled = []
    shifted = S.ParameterFamily.shifted
    # the full path with each parameter tested on its own (three would be tested jointly)
    monkeypatch.setattr(S, "JOINT_TEST_PARAMETERS", 99)
    monkeypatch.setattr(S.ParameterFamily, "shifted",
                        lambda self, j, step: compiled.append(j) or shifted(self, j, step))
    full = kinematic_sensitivities(fourbar(), names, times)
    n_full = len(compiled)
    assert full.exact == (True, True, True)
    compiled.clear()
    known = S._kinematic_sensitivities(fourbar(), names, times, None, full.exact, {})
    # the two lengths move coordinates: one member each; the density enters no constraint
    assert n_full == 2 * len(names) and sorted(compiled) == [0, 1, 2]
    assert known.exact == full.exact
    for x, y in ((known.dq, full.dq), (known.dv, full.dv), (known.da, full.da),
                 (known.marker("P"), full.marker("P"))):
        assert np.abs(y).max() > 1e-3
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-9 * np.abs(y).max())
    tau_full, tau_known = full.input_torque("motor"), known.input_torque("motor")
    np.testing.assert_allclose(tau_known, tau_full, rtol=0, atol=1e-9 * np.abs(tau_full).max())


def _compile_counter(monkeypatch):
    """Count the members compiled: (list of shifted parameters, list of joint moves)."""
    from linkdyn.design import sensitivity as S

    shifted, joint = [], []
    one, moved = S.ParameterFamily.shifted, S.ParameterFamily.moved
    monkeypatch.setattr(S.ParameterFamily, "shifted",
                        lambda self, j, step: shifted.append(j) or one(self, j, step))
    monkeypatch.setattr(S.ParameterFamily, "moved",
                        lambda self, d, name: (joint.append(name) if name.startswith("(")
                                               else None) or moved(self, d, name))
    return shifted, joint


@pytest.mark.parametrize("source, names", [
    (fourbar, ["bodies.coupler.length", "ground.D.x", "bodies.rocker.density",
               "bodies.crank.length"]),
    # (a density, which moves no point, keeps the lengths on members)
    ("jansen_driven", [f"bodies.L{i}.length" for i in range(2, 8)] + ["bodies.L8.density"]),
])
def test_parameters_tested_jointly_compile_one_member_each_and_agree(monkeypatch, source,
                                                                       names):
    """From three parameters on, their affinity is tested jointly by two members at
    p +- h w (random weights w): where it holds, each parameter needs only its member at
    p + h, and the results agree with those of each parameter tested on its own (its
    members at p +- h) to round-off, the exactness and the kinetostatic derivatives
    included (a density enters only those: accepted, as on its own)."""
    from linkdyn.design import sensitivity as S

    model = source() if callable(source) else source
    times = np.linspace(0.0, 1.0, 41)
    shifted, joint = _compile_counter(monkeypatch)
    together = kinematic_sensitivities(model, names, times)
    assert len(joint) == 2 and sorted(shifted) == list(range(len(names)))
    monkeypatch.setattr(S, "JOINT_TEST_PARAMETERS", 99)
    shifted.clear(), joint.clear()
    alone = kinematic_sensitivities(model, names, times)
    assert not joint and sorted(shifted) == sorted(2 * list(range(len(names))))
    assert together.exact == alone.exact == (True,) * len(names)
    marker = "P" if callable(source) else "foot"
    for x, y in ((together.dq, alone.dq), (together.dv, alone.dv), (together.da, alone.da),
                 (together.marker(marker), alone.marker(marker))):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-9 * np.abs(y).max())
    if callable(source):
        tau = alone.input_torque("motor")
        np.testing.assert_allclose(together.input_torque("motor"), tau, rtol=0,
                                   atol=1e-9 * np.abs(tau).max())


def test_a_parameter_that_is_not_affine_fails_the_joint_test_and_is_found_alone(monkeypatch):
    """A law's rate enters the Jansen linkage's constraints non-affinely: the joint test
    fails, every parameter is then tested on its own, and the rate alone is marked not
    exact (its derivatives by Richardson's extrapolation), as without the joint test."""
    from linkdyn.design import sensitivity as S

    names = ["bodies.L3.length", "drivers.crank.law.rate", "ground.P2.x"]
    times = np.linspace(0.0, 1.0, 21)
    shifted, joint = _compile_counter(monkeypatch)
    s = kinematic_sensitivities("jansen_driven", names, times)
    assert len(joint) == 2 and s.exact == (True, False, True)
    assert {j: shifted.count(j) for j in range(3)} == {0: 2, 1: 4, 2: 2}
    monkeypatch.setattr(S, "JOINT_TEST_PARAMETERS", 99)
    alone = kinematic_sensitivities("jansen_driven", names, times)
    np.testing.assert_array_equal(s.dq, alone.dq)


def test_an_unused_parameter_is_named_after_a_joint_test():
    """The joint path still refuses a parameter that enters nothing, by name."""
    names = ["bodies.L3.length", "ground.P2.x", "bodies.L5.velocity.x"]
    with pytest.raises(ArgumentError, match="'bodies.L5.velocity.x' do not enter"):
        kinematic_sensitivities("jansen_driven", names, [0.0, 0.1])


@pytest.mark.parametrize("source, names", [
    ("jansen_driven", ["bodies.L3.length", "ground.P2.x", "bodies.L7.length"]),
    ("five_ss", ["joints.J1.coordinates.x", "joints.J6.coordinates.z",
                 "joints.J1.coordinates.y"]),
    ("spatial_slider_crank", ["bodies.crank.points.pin.x", "ground.line.z",
                              "bodies.crank.points.o.y"]),
])
def test_directional_terms_formed_once_a_row_agree_with_each_parameters_own(source, names):
    """From three parameters on, the sweep forms rv_q = (Phi_q v + Phi_t)_q and ra_q once a
    row (the symmetry of second derivatives, gamma_v = -2 rv_q, the time columns apart);
    one parameter at a time it differences along each dq and dv. The two agree to
    round-off on an angle driver (a time factor on coordinates) and on natural
    coordinates."""
    from linkdyn.models import spatial

    model = getattr(spatial, source)() if source == "spatial_slider_crank" else source
    times = np.linspace(0.0, 1.0, 21)
    together = kinematic_sensitivities(model, names, times)
    for j, name in enumerate(names):
        alone = kinematic_sensitivities(model, [name], times)
        for x, y in ((together.dq, alone.dq), (together.dv, alone.dv),
                     (together.da, alone.da)):
            assert np.abs(y).max() > 1e-3
            np.testing.assert_allclose(x[:, :, j], y[:, :, 0], rtol=0,
                                       atol=1e-10 * np.abs(y).max())


def _interrupting(run):
    """``run`` with a Ctrl-C (SIGINT) sent 20 ms after it starts (it must be a compiled
    loop that takes longer: the signal then lands inside it)."""
    import os
    import signal
    import threading

    def wrapped(*args, **kwargs):
        timer = threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            return run(*args, **kwargs)
        finally:
            timer.cancel()
    return wrapped


@pytest.mark.parametrize("stage", ["analysis", "derivatives"])
def test_ctrl_c_keeps_the_sensitivities_computed(monkeypatch, stage):
    # Ctrl-C during the analysis, whose sweep forms these derivatives too, or during the
    # derivatives' own sweep after it (asked for ``at`` given times: here all of them)
    # (200,001 times of the four-bar: each loop takes some 0.5 s here) returns the rows
    # whose derivatives are complete, status "interrupted" with a warning, and those rows
    # are right (the closed form).
    import warnings

    import linkdyn._kinematics as compiled

    t = np.linspace(0.0, 50.0, 200_001)
    if stage == "analysis":     # (the timer starts with the compiled sweep: under the
        import linkdyn.solve.tracking as tracking   # sanitizers its set-up takes longer)

        class Analysis(compiled.SensitivitySweep):
            sweep = _interrupting(compiled.SensitivitySweep.sweep)
        monkeypatch.setattr(tracking, "SensitivitySweep", Analysis)
        at = None
    else:
        class Interrupted(compiled.SensitivitySweep):
            derivatives = _interrupting(compiled.SensitivitySweep.derivatives)
        monkeypatch.setattr(compiled, "SensitivitySweep", Interrupted)
        at = t
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = kinematic_sensitivities(fourbar(), PARAMS, t, at=at)
    assert s.status == "interrupted" and 0 < len(s.t) < len(t)
    assert any("interrupted" in str(w.message) for w in caught)
    assert s.dq.shape == (len(s.t), s.model.nq, len(PARAMS)) and s.q.shape[0] == len(s.t)
    dP = s.marker("P")
    for i in range(len(s.t) - 3, len(s.t)):
        _, exact = coupler_point_and_derivatives(1.0 + W * s.t[i])
        np.testing.assert_allclose(dP[i], exact, atol=1e-11)


def test_ctrl_c_pressed_while_the_members_compile_is_not_lost(monkeypatch):
    """Ctrl-C pressed in Python between the analysis and the derivatives' sweep (here from a
    finaliser while a member model compiles, where Python's KeyboardInterrupt would be
    dropped) stops the sensitivities before the sweep: status "interrupted", no rows."""
    import warnings

    from conftest import ctrl_c_in_a_finaliser
    from linkdyn.design import sensitivity

    real, calls = sensitivity.ParameterFamily.shifted, []

    def shifted(self, j, step):
        calls.append(1)
        if len(calls) == 1:
            ctrl_c_in_a_finaliser()
        return real(self, j, step)

    monkeypatch.setattr(sensitivity.ParameterFamily, "shifted", shifted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # (a density, which moves no point, keeps the others on members)
        s = kinematic_sensitivities(fourbar(), PARAMS + ["bodies.rocker.density"],
                                    np.linspace(0.0, 1.0, 11))
    assert calls and s.status == "interrupted" and len(s.t) == 0
    assert any("interrupted after 0 of 11" in str(w.message) for w in caught)
    import signal
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("source, names, restricted", [
    ("jansen_driven", ["bodies.L2.length", "bodies.L2.density"], True),
    ("jansen_driven", ["bodies.L5.length", "ground.P2.x", "drivers.crank.law.rate"], True),
    ("spatial_slider_crank", ["bodies.crank.points.pin.x", "ground.line.z"], True),
    # a point's coordinate that is zero: its terms appear when it moves (a new structure)
    ("spatial_slider_crank", ["bodies.crank.points.pin.x", "bodies.crank.points.o.y"],
     False),
])
def test_members_restricted_to_the_rows_they_change_give_the_same_derivatives(
        monkeypatch, source, names, restricted):
    """The compiled sweep evaluates the member models only on the constraint rows where
    they differ from the model (linkdyn.compile.rows): every other row's weighted sum is
    zero. The derivatives are the same, bit for bit, as with the whole members. Members
    that differ in structure are evaluated whole."""
    import linkdyn.design.derivative_sweep as derivative_sweep
    import linkdyn.design.sensitivity as sensitivity
    from linkdyn.models import spatial

    model = getattr(spatial, source)() if source == "spatial_slider_crank" else source
    times = np.linspace(0.0, 1.0, 31)
    restrict = sensitivity._restricted
    flags = []

    def spy(base, models, positions):
        out = restrict(base, models, positions)
        flags.append(out[1] is not None)        # (the rows the restricted members write)
        return out
    monkeypatch.setattr(sensitivity, "_restricted", spy)
    monkeypatch.setattr(derivative_sweep, "RESTRICT_WORK", 0)   # however short the sweep
    part = kinematic_sensitivities(model, names, times)
    assert flags and flags[-1] is restricted
    monkeypatch.setattr(sensitivity, "_restricted", lambda base, models, n: (models, None))
    whole = kinematic_sensitivities(model, names, times)
    for x, y in ((part.dq, whole.dq), (part.dv, whole.dv), (part.da, whole.da)):
        assert np.abs(y).max() > 1e-3
        assert np.array_equal(x, y)


def test_changed_rows_and_restricted_kernels_of_a_length():
    """A bar's length moves the local points of the joints on that bar: those joints' rows
    change and no other; the kernels restricted to them evaluate exactly those rows, equal
    to the whole kernels' there, and write nothing else."""
    from linkdyn._kernels import Kernels
    from linkdyn.compile.rows import changed_rows, restricted_kernels

    family = ParameterFamily("jansen_driven", ["bodies.L2.length"])
    base, member = family.base, family.shifted(0, 1e-3)
    rows = changed_rows(base.kernels, member.kernels)
    a = base.kernels.arrays
    joints = np.flatnonzero((a["rev_local"] != member.kernels.arrays["rev_local"])
                            .reshape(-1, 4).any(axis=1))
    assert len(joints) >= 1
    expected = np.zeros(base.nc, dtype=bool)
    expected[np.concatenate([a["rev_row"][joints], a["rev_row"][joints] + 1])] = True
    assert np.array_equal(rows, expected)
    assert changed_rows(base.kernels, base.kernels).sum() == 0

    sub = restricted_kernels(member.kernels, rows)
    rng = np.random.default_rng(7)
    q, v = base.q0 + 0.1 * rng.standard_normal(base.nq), rng.standard_normal(base.nq)
    t = 0.3
    for name, args, size in (("phi", (q, t), base.nc), ("phi_t", (q, t), base.nc),
                             ("gamma", (q, v, t), base.nc),
                             ("phi_q_values", (q, t), len(base.phiq_rowind))):
        whole = getattr(member.kernels, name)(*args)
        for fill in (0.0, np.nan):      # what the restricted kernels leave alone stays
            out = np.full(size, fill)
            getattr(sub, name)(*args, out=out)
            mine = (rows if size == base.nc else rows[base.phiq_rowind])
            assert np.array_equal(out[mine], whole[mine]), name
            if name != "phi_t":             # (phi_t writes every row, the others zero)
                assert np.array_equal(np.isnan(out[~mine]), np.isnan(np.full(
                    (~mine).sum(), fill))), name

    # kernels that differ in structure (a term on another coordinate) are not compared
    other = dict(a, nc=base.nc, body_stride=4)
    other["rev_slot"] = a["rev_slot"][::-1].copy()
    assert changed_rows(base.kernels, Kernels(other)) is None


@pytest.mark.parametrize("source", ["jansen_driven", "fourbar"])
def test_each_parameters_directional_terms_match_the_jacobians_formed_once_a_row(source):
    """Below three parameters the sweep forms the q-derivatives of Phi_q v + Phi_t and
    Phi_q a - gamma along each parameter's own dq (the Jacobian entries that change over a
    move of the coordinates' size, and Phi_t's and gamma's changes); from three on, it forms
    those Jacobians once a row and multiplies. Both are exact for these affine residuals,
    so one parameter's dv and da agree with the same parameter's among four to round-off:
    some 1e-15 of their size measured (a move of a thousandth of that size, as before,
    left 3e-13), asserted within 1e-13."""
    model = fourbar() if source == "fourbar" else source
    names = (PARAMS[:4] if source == "fourbar" else
             [f"bodies.L{i}.length" for i in range(2, 6)])
    times = np.linspace(0.0, 1.0, 41)
    four = kinematic_sensitivities(model, names, times)
    for k in (1, 2):
        few = kinematic_sensitivities(model, names[:k], times)
        for x, y in ((few.dq, four.dq), (few.dv, four.dv), (few.da, four.da)):
            y = y[:, :, :k]
            assert np.abs(y).max() > 1.0
            assert np.abs(x - y).max() <= 1e-13 * np.abs(y).max()


def _relative_angle_fourbar():
    """fourbar() driven at its coupler pin B (relative angle: not affine in q)."""
    from linkdyn.compile import compile_model
    from linkdyn.describe import modelfile

    base = fourbar()
    crank_, coupler = (math.atan2(base.q0[4 * i + 3], base.q0[4 * i + 2]) for i in (0, 1))
    data = modelfile.to_dict(base.description)
    data["drivers"] = [{"type": "angle", "name": "motor", "joint": "B",
                        "law": {"law": "linear", "value": coupler - crank_, "rate": 1.0}}]
    return compile_model(modelfile.from_dict(data))


@pytest.mark.parametrize("case", ["moves", "moves at", "members", "four members",
                                  "not affine", "spatial linkage"])
def test_a_lower_order_gives_the_same_derivatives_as_far_as_it_goes(case):
    """order=0 forms dq alone, order=1 dq and dv: on every path of the sweep (points moved
    in the analysis' own sweep, or at some rows after it; members; the Jacobians formed
    once a row; central differences in q; a spatial linkage's compiled derivatives)
    what they form is what order=2 forms, bit for bit, and the rest is None."""
    from linkdyn.models.linkages import linkage

    times, at = np.linspace(0.0, 1.0, 21), None
    model, names = fourbar(), ["bodies.crank.length", "ground.D.x"]
    if case == "moves at":
        at = times[::4]
    elif case == "members":
        model, names = slider_crank(), ["bodies.crank.length", "ground.G.y"]
    elif case == "four members":
        names = ["bodies.crank.length", "bodies.coupler.length", "ground.D.x",
                 "drivers.motor.law.rate"]
    elif case == "not affine":
        model = _relative_angle_fourbar()
    elif case == "spatial linkage":
        model = linkage("five_ss")
        names, times = ["joints.J11.coordinates.x", "joints.J8.coordinates.z"], \
            np.linspace(0.0, 0.5, 11)
    full = kinematic_sensitivities(model, names, times, at=at)
    marker = "P" if case != "spatial linkage" and case != "members" else (
        "M" if case == "members" else full.model.marker_names[0])
    for order in (0, 1):
        s = kinematic_sensitivities(model, names, times, at=at, order=order)
        assert s.order == order and s.exact == full.exact
        np.testing.assert_array_equal(s.q, full.q)
        np.testing.assert_array_equal(s.dq, full.dq)
        np.testing.assert_array_equal(s.marker(marker), full.marker(marker))
        assert s.da is None
        if order == 1:
            np.testing.assert_array_equal(s.dv, full.dv)
            np.testing.assert_array_equal(s.marker_velocity(marker),
                                          full.marker_velocity(marker))
            with pytest.raises(ArgumentError, match="accelerations were not formed.*order=1"):
                s.marker_acceleration(marker)
        else:
            assert s.dv is None
            with pytest.raises(ArgumentError, match="velocities were not formed.*order=0"):
                s.marker_velocity(marker)
    assert np.abs(full.dq).max() > 1e-3


def _sweep_solves(monkeypatch):
    """The linear solves of every kinematic sweep run (KinematicSweep.solves), collected."""
    import linkdyn.solve.tracking as tracking

    solves, sweep = [], tracking._sweep

    def counted(*args, **kwargs):
        out = sweep(*args, **kwargs)
        solves.append(out[3].solves)
        return out
    monkeypatch.setattr(tracking, "_sweep", counted)
    return solves


def test_each_order_is_one_more_solve_a_position(monkeypatch):
    """The derivatives of order k take k + 1 solves a position beyond the analysis' own
    (dq, then dv, then da, with their refinement's corrections: a tenth of a solve a
    column measured on the Jansen linkage, allowed up to a half)."""
    solves = _sweep_solves(monkeypatch)
    times = np.linspace(0.0, 1.0, 181)
    linkdyn.kinematics("jansen_driven", times)
    analysis = solves.pop()
    for order in (0, 1, 2):
        kinematic_sensitivities("jansen_driven", ["bodies.L5.length"], times, order=order)
        extra = solves.pop() - analysis
        assert (order + 1) * len(times) <= extra <= 1.5 * (order + 1) * len(times), order


@pytest.mark.parametrize("order", [3, -1, True, 1.5, "2", None])
def test_a_bad_order_is_refused(order):
    with pytest.raises(ArgumentError, match="order must be 0 .* got"):
        kinematic_sensitivities("jansen_driven", ["bodies.L5.length"], [0.0, 0.1],
                                order=order)


def test_below_order_2_there_is_no_input_torque_and_a_density_does_not_enter():
    """The input torque's derivatives need the accelerations': refused below order=2, and
    a parameter that enters only the kinetostatics (a density) then enters nothing asked
    for, which is named."""
    times = np.linspace(0.0, 1.0, 11)
    s = kinematic_sensitivities(crank(), ["bodies.bar.length"], times, order=1)
    with pytest.raises(ArgumentError, match="accelerations were not formed"):
        s.input_torque("motor")
    with pytest.raises(ArgumentError, match="'bodies.bar.density' do not enter the "
                                            "kinematics of"):
        kinematic_sensitivities(crank(), ["bodies.bar.length", "bodies.bar.density"], times,
                                order=0)


def test_derivatives_after_the_analysis_on_straight_line_code_are_klus(code_cache,
                                                                      monkeypatch):
    """The derivatives at given rows (``at``: SensitivitySweep.derivatives) factorise Phi_q
    with the straight-line LU code where it is built (linkdyn.solve.lu_code; a fresh cache,
    so that its pivot order is this model's): every row's factorisation is the code's, and
    the derivatives are KLU's to round-off (measured 2e-14 of accelerations' derivatives of
    size 74)."""
    from linkdyn.solve import generated, lu_code

    if generated.compiler() is None:
        pytest.skip("no C compiler")
    sweeps = []
    attach = lu_code.attach

    def kept(sweep, t, q):
        sweeps.append(sweep)
        return attach(sweep, t, q)

    monkeypatch.setattr(lu_code, "attach", kept)
    t = np.arange(0.0, 8.0, 0.8)
    runs = {}
    for how in ("off", "auto"):
        monkeypatch.setenv("LINKDYN_GENERATED_CODE", how)
        runs[how] = kinematic_sensitivities(fourbar(), PARAMS, t, at=t)
        last = sweeps[-1]           # the derivatives' own sweep, made last
        made = last.generated_factorizations
        assert made == (0 if how == "off" else last.factorizations) and last.factorizations
    for x, y in ((runs["off"].dq, runs["auto"].dq), (runs["off"].dv, runs["auto"].dv),
                 (runs["off"].da, runs["auto"].da)):
        np.testing.assert_allclose(y, x, rtol=0.0, atol=1e-12 * np.abs(x).max())
