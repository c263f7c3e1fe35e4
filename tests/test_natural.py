"""Spherical and spatial linkages in natural coordinates (linkdyn.natural): closed-form
spherical four-bar, invariants of the point-line-plane paper's linkages along their motion,
exact derivatives against finite differences, validation and files."""

import json
import math
import pickle

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError, ModelFileError
from linkdyn.geometric import Linkage
from linkdyn.models.linkages import linkage as seed_linkage


def _rot(axis, angle, x):
    """Rodrigues: x turned by ``angle`` about the unit ``axis``."""
    return (x * math.cos(angle) + np.cross(axis, x) * math.sin(angle)
            + axis * (axis @ x) * (1.0 - math.cos(angle)))


def _sph(polar, azimuth):
    return np.array([math.sin(polar) * math.cos(azimuth), math.sin(polar) * math.sin(azimuth),
                     math.cos(polar)])


# A spherical crank-rocker: arcs ground 60, crank 25, coupler 55, rocker 50 degrees.
A = np.array([0.0, 0.0, 1.0])
D = _sph(math.radians(60), 0.0)
B0 = _sph(math.radians(25), math.radians(90))
K_COUPLER = math.cos(math.radians(55))


def _c_start():
    """C on the sphere at arc 55 deg from B0 and 50 deg from D (the branch with z > 0 side
    of the plane through B0 and D chosen by the sign of gamma)."""
    M = np.array([B0, D])
    k = np.array([K_COUPLER, math.cos(math.radians(50))])
    ab = np.linalg.solve(M @ M.T, k)
    base = ab @ M
    n = np.cross(B0, D)
    gamma = math.sqrt((1.0 - base @ base) / (n @ n))
    return base + gamma * n


C0 = _c_start()


def spherical_fourbar(rate=1.0):
    g = Linkage("sph4r", kind="spherical")
    g.revolute("A", A)
    g.revolute("B", B0)
    g.revolute("C", C0)
    g.revolute("D", D)
    g.link("crank", ["A", "B"])
    g.link("coupler", ["B", "C"])
    g.link("rocker", ["C", "D"])
    g.link("base", ["A", "D"], ground=True)
    g.input("A", rate)
    return g


def _closed_form(theta):
    """Output angle psi of the rocker about D, and C, C', C'' for a crank at theta (rad)
    turning at 1 rad/s: the input-output equation B(theta) . R(D, psi) C0 = cos(coupler)
    is P cos psi + Q sin psi + S = k."""
    out, psi_prev = [], 0.0
    for th in theta:
        B = _rot(A, th, B0)
        S = (B @ D) * (D @ C0)
        P = B @ C0 - S
        Q = B @ np.cross(D, C0)
        base, half = math.atan2(Q, P), math.acos((K_COUPLER - S) / math.hypot(P, Q))
        roots = np.array([base + half, base - half])
        diff = np.angle(np.exp(1j * (roots - psi_prev)))
        psi = psi_prev + diff[np.argmin(np.abs(diff))]
        psi_prev = psi
        C = _rot(D, psi, C0)
        dB, ddB = np.cross(A, B), np.cross(A, np.cross(A, B))
        dC, ddC = np.cross(D, C), np.cross(D, np.cross(D, C))
        w = -(dB @ C) / (B @ dC)
        acc = -(ddB @ C + 2.0 * (dB @ dC) * w + (B @ ddC) * w * w) / (B @ dC)
        out.append((C, dC * w, ddC * w * w + dC * acc))
    return [np.array(x) for x in zip(*out)]


def test_spherical_fourbar_matches_the_closed_form_input_output_equation():
    model = spherical_fourbar().build()
    assert isinstance(model, linkdyn.NaturalModel) and model.space == "spherical"
    t = np.linspace(0.0, 2 * math.pi, 361)
    r = linkdyn.kinematics(model, t)
    C, dC, ddC = _closed_form(t)
    np.testing.assert_allclose(r.marker("C"), C, atol=1e-12)
    np.testing.assert_allclose(r.marker_velocity("C"), dC, atol=1e-11)
    np.testing.assert_allclose(r.marker_acceleration("C"), ddC, atol=1e-10)
    # The crank turns right-handed about A at 1 rad/s.
    np.testing.assert_allclose(r.marker("B"), [_rot(A, th, B0) for th in t], atol=1e-12)
    # A crank-rocker: the rocker swings, then comes back to its start after one turn.
    np.testing.assert_allclose(r.marker("C")[-1], C0, atol=1e-12)


def _members(name):
    g = seed_linkage(name)
    return g, {j.name: j.kind for j in g.joints.values()}


def _vectors(result, g):
    """Every joint's vector along the motion (points and plane normals)."""
    m = result.model
    out = {}
    for j in g.joints:
        if j in m.marker_names:
            out[j] = result.marker(j)
        elif f"{j}.nx" in m.coordinate_names:
            k = m.coordinate_names.index(f"{j}.nx")
            out[j] = result.q[:, k:k + 3]
        else:                   # a plane of the ground
            n = np.array(g.joints[j].coordinates)
            out[j] = np.tile(n / np.linalg.norm(n), (len(result.t), 1))
    return out


@pytest.mark.parametrize("name", ["spherical_rrpr", "spherical_watt1"])
def test_spherical_links_stay_rigid_and_on_the_sphere(name):
    """Every pair of joints of a link keeps its dot product (arc, point-plane distance or
    plane-plane angle), every point and normal stays unit, over the input's range."""
    g, kinds = _members(name)
    model = g.build()
    t = np.linspace(0.0, 6 * math.pi, 900)
    r = linkdyn.kinematics(model, t, at_limit="reverse")
    assert len(r.t) == len(t)
    vec = _vectors(r, g)
    for j, v in vec.items():
        np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-13, err_msg=j)
    for link, members in g.links.items():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                dots = np.einsum("ij,ij->i", vec[a], vec[b])
                assert np.ptp(dots) < 1e-13, (link, a, b, np.ptp(dots))
    # Rigid links turn: the orientation of a ternary link (the sign of the triple product
    # of its members) never flips, i.e. no mirror branch.
    for link, members in g.links.items():
        if len(members) >= 3:
            triple = np.einsum("ij,ij->i", vec[members[0]],
                               np.cross(vec[members[1]], vec[members[2]]))
            assert np.all(np.sign(triple) == np.sign(triple[0])), link
    if name == "spherical_watt1":
        # The input rocks between two limit positions; traced with reversals, the coupler
        # curve is closed, each pass through the start's input alternating between the two
        # branches (a jump across a limit would repeat a branch: the sweep retries such steps
        # in sub-steps, branch_retries).
        assert len(r.limits) >= 4 and r.branch_changes == ()
        assert r.stats["branch_retries"] > 0        # jumps that were met and avoided
        assert [round(t_lim, 9) for t_lim, _ in r.limits[:2]] == [1.694083134, -0.756935779]
        back = np.flatnonzero(np.abs(r.t - r.t[0]) < 1e-9)
        assert len(back) >= 4
        J8 = r.marker("J8")[back]
        np.testing.assert_allclose(J8[0::2], np.tile(J8[0], (len(J8[0::2]), 1)), atol=1e-12)
        np.testing.assert_allclose(J8[1::2], np.tile(J8[1], (len(J8[1::2]), 1)), atol=1e-12)
        assert np.linalg.norm(J8[1] - J8[0]) > 0.5


def test_five_ss_keeps_its_links_and_platform_rigid():
    g, _ = _members("five_ss")
    model = g.build()
    assert model.space == "spatial" and model.nq == 18 and model.nc == 18
    t = 0.01 * np.arange(181)
    r = linkdyn.kinematics(model, t)
    P = {j: r.marker(j) for j in g.joints}
    scale = 20.0          # the table's coordinates span about 20 units
    for link, members in g.links.items():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                d = np.linalg.norm(P[a] - P[b], axis=1)
                assert np.ptp(d) < 1e-13 * scale, (link, a, b, np.ptp(d))
    # The actuator's length grows at 1 unit/s.
    length = np.linalg.norm(P["J7"] - P["J1"], axis=1)
    np.testing.assert_allclose(length - length[0], t, atol=1e-12)
    # Velocities and accelerations against central differences of the positions.
    h = 1e-4
    for k in (0, 60, 120, 179):
        tt = np.array([t[k] - h, t[k], t[k] + h]) if k else np.array([0.0, h, 2 * h])
        rr = linkdyn.kinematics(model, tt, q0=r.q[k])
        v_fd = (rr.q[2] - rr.q[0]) / (2 * h)
        a_fd = (rr.q[2] - 2 * rr.q[1] + rr.q[0]) / h**2
        np.testing.assert_allclose(rr.v[1], v_fd, atol=1e-6 * np.abs(v_fd).max())
        np.testing.assert_allclose(rr.a[1], a_fd, atol=1e-4 * np.abs(a_fd).max())



def _in_other_units(name, factor):
    """Built-in linkage ``name`` with every length times ``factor``: points scaled, a
    prismatic joint's line a x + b y + c = 0 with c scaled, an actuator's rate scaled."""
    data = linkdyn.geometric.to_dict(seed_linkage(name))
    for joint in data["joints"]:
        c = joint["coordinates"]
        joint["coordinates"] = ([c[0], c[1], factor * c[2]] if joint["type"] == "prismatic"
                                else [factor * x for x in c])
    if "actuator" in data["input"]:
        data["input"]["rate"] *= factor
    return linkdyn.geometric.from_dict(data).build()


@pytest.mark.parametrize("name, factor", [("five_ss", 10.0), ("five_ss", 100.0),
                                          ("five_ss", 1000.0), ("stephenson2", 1000.0)])
def test_a_linkage_in_other_units_assembles_and_moves_the_same(name, factor):
    """A linkage with every length times 10 to 1000 (the 5-SS's 10 m coordinates in
    centimetres or millimetres; the Stephenson-II six-bar in millimetres): the same motion,
    scaled, and the same condition estimates.

    Before, the 5-SS's squared distances (|p1 - p2|^2 - L^2, terms of 1e4 to 1e8) rounded
    to some 1e-12 to 1e-8, above the Newton tests' tol max(1, |q|): consistent_state raised
    AssemblyError ('|Phi| = 2.74e-12 after 30 Newton iterations, tolerance 4e-13') and the
    sweep stopped at false singular configurations. Newton now stops where its steps no
    longer cut a residual that is rounding noise (linkdyn.solve.assembly.residual_roundoff).
    And KLU's condition estimate fell with the units (the 5-SS's 1.3e-4 became 1.3e-7 in
    millimetres, the six-bar's 1e-8: singular configurations below the 1e-6 threshold);
    it is now taken of Phi_q with rows and columns scaled to unit largest entries. And the
    steps were judged against a metre: in millimetres they were cut into sub-steps."""
    model = _in_other_units(name, factor)
    start = linkdyn.consistent_state(model)
    assert start.phi_norm <= max(1e-13 * factor,
                                 linkdyn.solve.assembly.residual_roundoff(model, start.q, 0.0))
    base_model = seed_linkage(name).build()
    t = np.linspace(0.0, 0.5, 201) if name == "five_ss" else np.linspace(0.0, 1.0, 201)
    base = linkdyn.kinematics(base_model, t)
    scaled = linkdyn.kinematics(model, t)
    assert scaled.status == "success" and not scaled.singularities
    # steps judged against the mechanism's size, not a metre: in millimetres the six-bar's
    # steps were cut into 358 sub-steps (its points near the origin moved "too far")
    assert scaled.stats["sub_steps"] == base.stats["sub_steps"] == 0
    np.testing.assert_allclose(scaled.rcond, base.rcond, rtol=1e-6)
    # the same configurations and velocities, to the conditioning's rounding (7e-14 m and
    # 2e-13 m/s measured on the 5-SS)
    for marker in model.marker_names:
        np.testing.assert_allclose(scaled.marker(marker) / factor, base.marker(marker),
                                   rtol=0, atol=1e-11)
        np.testing.assert_allclose(scaled.marker_velocity(marker) / factor,
                                   base.marker_velocity(marker), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["five_ss", "stephenson2"])
def test_assembly_modes_are_the_same_in_any_unit_of_length(name):
    """The 5-SS and the Stephenson-II six-bar at 1/1000, 1 and 1000 times their size have
    the same assembly modes, scaled: four each. Before, the deflation's shift and the
    search's tolerances were a metre: the 5-SS in millimetres had none (its modes' rounding
    missed the tolerance) and the six-bar had 4, 3 and 2 at the three sizes."""
    found = {}
    for factor in (1e-3, 1.0, 1e3):
        model = _in_other_units(name, factor)
        modes = linkdyn.assembly_modes(model, 0.3)
        for mode in modes:
            assert np.all(model.orientation_cosines(mode.q, 0.3) > 0.0)
            assert np.abs(model.phi(mode.q, 0.3)).max() <= 1e-12 * max(1.0, factor) ** 2
        found[factor] = np.array([model.marker_positions(m.q).ravel() / factor
                                  for m in modes])
    assert len(found[1.0]) == 4
    for factor in (1e-3, 1e3):       # the same markers, one to one, to the rounding
        assert len(found[factor]) == 4
        gaps = np.abs(found[factor][:, None, :] - found[1.0][None, :, :]).max(axis=2)
        match = gaps.argmin(axis=1)
        assert sorted(match) == [0, 1, 2, 3] and gaps.min(axis=1).max() < 1e-9


@pytest.mark.parametrize("name", ["spherical_rrpr", "spherical_watt1", "five_ss"])
def test_natural_rows_have_exact_derivatives(name):
    """Phi_q, Phi_t and gamma of the generic rows (the actuator's f^2 term included) against
    finite differences at a configuration away from the start."""
    model = linkdyn.load_model(name)
    r = linkdyn.kinematics(model, [0.0, 0.3])
    q, v, t = r.q[1], r.v[1], 0.3
    rng = np.random.default_rng(1)
    h = 1e-6
    J = model.phi_q(q, t).toarray()
    J_fd = np.column_stack([(model.phi(q + h * e, t) - model.phi(q - h * e, t)) / (2 * h)
                            for e in np.eye(model.nq)])
    np.testing.assert_allclose(J, J_fd, atol=1e-8 * max(1.0, np.abs(J).max()))
    np.testing.assert_allclose(model.phi_t(q, t),
                               (model.phi(q, t + h) - model.phi(q, t - h)) / (2 * h),
                               atol=1e-8 * max(1.0, np.abs(J).max()))
    # Along s -> (q + s w, t + s): d2 Phi / ds2 = -gamma(q, w, t), for any w.
    w = rng.standard_normal(model.nq)
    s = 1e-3      # the rows are quadratic in q (and t, for the actuator): round-off decides
    second = (model.phi(q + s * w, t + s) - 2 * model.phi(q, t) + model.phi(q - s * w, t - s))
    np.testing.assert_allclose(-model.gamma(q, w, t), second / s**2,
                               atol=1e-6 * max(1.0, np.abs(second / s**2).max()))
    # On the motion, Phi_q v = -Phi_t.
    np.testing.assert_allclose(J @ v, -model.phi_t(q, t), atol=1e-12 * max(1.0, abs(J).max()))


def test_seed_linkages_sweep_180_positions_with_velocities():
    for name, t_end in (("spherical_rrpr", 2 * math.pi), ("spherical_watt1", 1.6),
                        ("five_ss", 1.8)):
        model = linkdyn.load_model(name)
        t = np.linspace(0.0, t_end, 181)[1:]
        r = linkdyn.kinematics(model, t)
        assert r.q.shape == (180, model.nq) and np.all(np.isfinite(r.a))
        assert r.stats["newton_iterations"] <= 4 * 180


def test_descriptions_name_the_bad_entry():
    g = Linkage("s", kind="spherical")
    with pytest.raises(ModelError, match=r"revolute joint 'P': a point of a spherical linkage "
                                         r"lies on the unit sphere .* got \|p\| = 1.1"):
        g.revolute("P", (1.1, 0.0, 0.0))
    with pytest.raises(ModelError, match=r"joint 'P': a point of a spherical linkage is "
                                         r"\(x, y, z\); \(x, y\) points belong to planar"):
        g.revolute("P", (1.0, 0.0))
    with pytest.raises(ModelError, match="prismatic joint 'N': the plane of a spherical "
                                         "prismatic joint passes through the centre"):
        g.prismatic("N", (0.0, 0.0, 1.0, 0.5))
    with pytest.raises(ModelError, match="prismatic joint 'N': the plane's normal"):
        g.prismatic("N", (0.0, 0.0, 0.0))
    with pytest.raises(ModelError, match="spherical joint 'S': a spherical linkage has no "
                                         "spherical joints"):
        g.spherical("S", (0.0, 0.0, 1.0))
    with pytest.raises(ModelError, match="actuator: unknown joint 'Q'"):
        g.actuator("Q", "R")
    with pytest.raises(ModelError, match="kind must be one of planar, spherical, spatial"):
        Linkage("x", kind="hyperbolic")
    p = Linkage("p")
    with pytest.raises(ModelError, match="actuator: planar linkages are driven at a joint"):
        p.actuator("A", "B")
    s = Linkage("x", kind="spatial")
    with pytest.raises(ModelError, match="revolute joint 'R': a spatial linkage has no "
                                         "revolute joints"):
        s.revolute("R", (0.0, 0.0, 0.0))
    with pytest.raises(ModelError, match="a spatial linkage is driven by a linear actuator"):
        s.input("R")
    # A link whose joints are all on the ground, a collinear spatial link, an actuator with
    # both ends on the ground.
    for k, p in ((0, (0, 0, 0)), (1, (1, 0, 0)), (3, (0, 1, 0))):
        s.spherical(f"J{k}", p)
    s.coupler("C", (1.0, 1.0, 0.0))
    s.link("base", ["J0", "J3"], ground=True)
    s.link("bar", ["J0", "J3"])
    s.link("rod", ["J0", "J1", "C"])
    s.link("rod2", ["J1", "J3"])
    s.actuator("J0", "J3")
    with pytest.raises(ModelError, match="actuator: both ends .* are on the ground"):
        s.build()
    s.actuator("J0", "J1")
    with pytest.raises(ModelError, match="link 'bar': every joint it carries is on the ground"):
        s.build()
    s2 = Linkage("y", kind="spatial")
    for k, p in enumerate([(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (0, 2, 0)]):
        s2.spherical(f"J{k}", p)
    s2.link("base", ["J0", "J4"], ground=True)
    s2.link("line", ["J1", "J2", "J3"])
    s2.link("a", ["J0", "J1"])
    s2.link("b", ["J4", "J2"])
    s2.link("c", ["J4", "J3"])
    s2.actuator("J0", "J2")
    with pytest.raises(ModelError, match="link 'line': its joints lie on one line"):
        s2.build()


def test_dynamics_refuses_kinematic_descriptions():
    model = linkdyn.load_model("spherical_rrpr")
    for call in (lambda: linkdyn.simulate(model, 1.0), lambda: linkdyn.equilibrium(model)):
        # it says how to get its dynamics (the message said they were not available yet)
        with pytest.raises(ModelError, match="spherical linkage in natural coordinates, a "
                                             "kinematic description .* linkdyn.kinematics .*"
                                             "SpatialModelBuilder.*five_ss_dynamic"):
            call()


def test_linkage_files_and_pickles_give_the_same_model(tmp_path):
    for name in ("spherical_rrpr", "five_ss"):
        g = seed_linkage(name)
        path = tmp_path / f"{name}.json"
        linkdyn.geometric.save(g, path)
        data = json.loads(path.read_text())
        assert data["kind"] == g.kind
        loaded = linkdyn.load_model(str(path))
        model = g.build()
        assert loaded == model and linkdyn.geometric.from_dict(data) == g
        again = pickle.loads(pickle.dumps(model))
        assert again == model
        t = np.linspace(0.0, 1.0, 11)
        np.testing.assert_array_equal(linkdyn.kinematics(again, t).q,
                                      linkdyn.kinematics(model, t).q)
    data["joints"][0]["coordinates"] = [1.0, 2.0]
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"joints\[0\] spherical joint 'J1': a point of "
                                             r"a spatial linkage is \(x, y, z\)"):
        linkdyn.load_model(str(path))
    data["joints"][0]["coordinates"] = [0.0, 0.0, 0.0]
    data["input"] = {"actuator": ["J1"], "rate": 1.0}
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"input.actuator expected the names of two"):
        linkdyn.load_model(str(path))
