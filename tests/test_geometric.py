"""Linkages from points and lines (linkdyn.geometric) and the point-line-plane paper's planar
examples: the paper's rigidity conditions along the whole motion, exact velocities and
accelerations against differences of positions, and errors that name the entry."""

import itertools
import math

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError
from linkdyn.geometric import Linkage
from linkdyn.models import load_model
from linkdyn.results import PointGeometry
from conftest import triple_rocker_linkage

TIMES = np.linspace(0.0, 2 * math.pi, 361)      # one turn of the input at 1 rad/s


def point_paths(model, q):
    """{(link, joint): (n, 2) world positions} of every body point."""
    geo = PointGeometry(model, q)
    rows = np.arange(len(q))
    return {(b.name, p): geo.point(b.name, xy, rows)
            for b in model.description.bodies for p, xy in b.local_points().items()
            if p != "cm"}


@pytest.mark.parametrize("name", ["stephenson2", "jansen_modified"])
def test_seed_linkages_keep_their_links_rigid_over_a_turn(name):
    model = load_model(name)
    r = linkdyn.kinematics(model, TIMES)
    assert len(r.t) == len(TIMES) and not r.singularities
    paths = point_paths(model, r.q)
    links = {}
    for (link, joint), path in paths.items():
        links.setdefault(link, {})[joint] = path
    for link, pts in links.items():
        for (ja, pa), (jb, pb) in itertools.combinations(pts.items(), 2):
            d = np.hypot(*(pa - pb).T)
            assert np.ptp(d) < 1e-12 * max(1.0, d[0]), (link, ja, jb)
    # Revolute joints: the links they pin meet there at every position.
    for (link, joint), path in paths.items():
        for (other, j2), p2 in paths.items():
            if j2 == joint and other != link and model.description.joints and \
                    joint not in {j.name for j in model.description.joints
                                  if type(j).__name__ == "PrismaticSpec"}:
                assert np.abs(path - p2).max() < 1e-12, (joint, link, other)


def test_prismatic_joints_slide_along_their_lines():
    model = load_model("stephenson2")
    r = linkdyn.kinematics(model, TIMES)
    paths = point_paths(model, r.q)
    # J7 is the ground line y = -1.24: the slider L5's point on it stays on it and moves.
    slide = paths[("L5", "J7")]
    assert np.abs(slide[:, 1] + 1.24).max() < 1e-12 and np.ptp(slide[:, 0]) > 0.1
    # J3 joins L2 and L3: no relative rotation; their points on the line stay on the line
    # through L2's, whose direction turns with L2.
    rot = r.body_angle("L3") - r.body_angle("L2")
    assert np.ptp(rot) < 1e-12
    a, b = -0.17, 0.98
    direction0 = np.array([b, -a]) / math.hypot(a, b)
    theta = r.body_angle("L2") - r.body_angle("L2")[0]
    direction = np.column_stack([direction0[0] * np.cos(theta) - direction0[1] * np.sin(theta),
                                 direction0[0] * np.sin(theta) + direction0[1] * np.cos(theta)])
    gap = paths[("L3", "J3")] - paths[("L2", "J3")]
    assert np.abs(gap[:, 0] * direction[:, 1] - gap[:, 1] * direction[:, 0]).max() < 1e-12
    assert np.ptp(np.einsum("ij,ij->i", gap, direction)) > 0.1      # it slides


@pytest.mark.parametrize("name", ["stephenson2", "jansen_modified"])
def test_velocities_and_accelerations_are_the_derivatives(name):
    model = load_model(name)
    h = 1e-4
    t = np.array([0.7, 0.7 + h, 0.7 + 2 * h, 2.9, 2.9 + h, 2.9 + 2 * h])
    r = linkdyn.kinematics(model, t)
    for k in (1, 4):
        v_fd = (r.q[k + 1] - r.q[k - 1]) / (2 * h)
        a_fd = (r.q[k + 1] - 2 * r.q[k] + r.q[k - 1]) / h**2
        np.testing.assert_allclose(r.v[k], v_fd, atol=1e-7 * max(1, np.abs(r.v[k]).max()))
        np.testing.assert_allclose(r.a[k], a_fd, atol=1e-5 * max(1, np.abs(r.a[k]).max()))
    # The input turns at 1 rad/s.
    np.testing.assert_allclose(r.body_angular_velocity("L1"), 1.0, atol=1e-12)


def fourbar_description():
    g = Linkage("fourbar")
    g.revolute("A", (0.0, 0.0))
    g.revolute("B", (0.1, 0.0))
    g.revolute("C", (0.3, 0.3))
    g.revolute("D", (0.4, 0.0))
    return g


def test_the_same_fourbar_by_points_and_by_bars_traces_the_same_coupler_curve():
    g = fourbar_description()
    g.coupler("P", (0.25, 0.35))
    g.link("crank", ["A", "B"])
    g.link("coupler", ["B", "C", "P"])
    g.link("rocker", ["C", "D"])
    g.link("base", ["A", "D"], ground=True)
    g.input("A", rate=1.0)
    by_points = g.build()
    b = linkdyn.ModelBuilder("fourbar", gravity=(0.0, 0.0))
    b.add_ground_point("A", (0.0, 0.0))
    b.add_ground_point("D", (0.4, 0.0))
    b.add_bar("crank", length=0.1, mass=1.0, position=(0.05, 0.0), angle=0.0)
    c = np.array([0.3, 0.3]) - np.array([0.1, 0.0])
    angle = math.atan2(c[1], c[0])
    b.add_bar("coupler", length=float(np.hypot(*c)), mass=1.0,
              position=tuple(np.array([0.1, 0.0]) + c / 2), angle=angle,
              points={"P": tuple(np.array([[math.cos(angle), math.sin(angle)],
                                           [-math.sin(angle), math.cos(angle)]])
                                 @ (np.array([0.25, 0.35]) - np.array([0.2, 0.15])))})
    rk = np.array([0.3, 0.3]) - np.array([0.4, 0.0])
    b.add_bar("rocker", length=float(np.hypot(*rk)), mass=1.0,
              position=tuple(np.array([0.4, 0.0]) + rk / 2), angle=math.atan2(rk[1], rk[0]))
    b.add_revolute("A", "crank.a", "ground.A")
    b.add_revolute("B", "crank.b", "coupler.a")
    b.add_revolute("C", "coupler.b", "rocker.b")
    b.add_revolute("D", "rocker.a", "ground.D")
    b.add_angle_driver("input", "A", linkdyn.laws.linear(0.0, -1.0))
    b.add_marker("P", "coupler.P")
    by_bars = b.build()
    times = np.linspace(0.0, 2 * math.pi, 181)
    p1 = linkdyn.kinematics(by_points, times).marker("P")
    p2 = linkdyn.kinematics(by_bars, times).marker("P")
    np.testing.assert_allclose(p1, p2, atol=1e-13)


def test_bad_descriptions_name_the_entry():
    g = fourbar_description()
    with pytest.raises(ModelError, match="link 'L1': unknown joint 'Z'"):
        g.link("L1", ["A", "Z"])
    with pytest.raises(ModelError, match="link 'L1': a link carries at least two joints"):
        g.link("L1", ["A"])
    with pytest.raises(ModelError, match="prismatic joint 'P': the line's normal"):
        g.prismatic("P", (0.0, 0.0, 1.0))
    with pytest.raises(ModelError, match="spherical or spatial linkage"):
        g.revolute("S", (0.94, 0.24, 0.24))
    with pytest.raises(ModelError, match="joint 'A': the name is already used"):
        g.revolute("A", (1.0, 1.0))
    # a point that is not a sequence leaked a TypeError
    for point in (None, 3.0):
        with pytest.raises(ModelError, match="coupler joint 'Q': a point is \\(x, y\\)"):
            g.coupler("Q", point)
    g.link("crank", ["A", "B"])
    g.link("coupler", ["B", "C"])
    with pytest.raises(ModelError, match="no ground link"):
        g.build()
    g.link("base", ["A", "D"], ground=True)
    with pytest.raises(ModelError, match="link 'base' is already the ground"):
        g.link("base2", ["A", "D"], ground=True)
    with pytest.raises(ModelError, match="no input"):
        g.build()
    g.input("B")
    with pytest.raises(ModelError, match="revolute joint 'C': a revolute joint pins two or "
                                         "more links, listed by 1"):
        g.build()
    g.link("rocker", ["C", "D"])
    with pytest.raises(ModelError, match="input: joint 'B' is not on the ground link 'base'"):
        g.build()
    g.input("A")
    assert g.build().nbody == 3


def test_linkage_files_round_trip_and_name_the_bad_field(tmp_path):
    import json

    from linkdyn import geometric
    from linkdyn.models.linkages import linkage

    data = geometric.to_dict(linkage("stephenson2"))
    path = tmp_path / "stephenson2.json"
    path.write_text(json.dumps(data))
    from_file = linkdyn.load_model(str(path))
    builtin = load_model("stephenson2")
    np.testing.assert_array_equal(from_file.q0, builtin.q0)
    r1 = linkdyn.kinematics(from_file, TIMES[:37])
    r2 = linkdyn.kinematics(builtin, TIMES[:37])
    np.testing.assert_array_equal(r1.marker("J8"), r2.marker("J8"))
    assert geometric.to_dict(geometric.from_dict(data)) == data

    def bad(change, match):
        broken = json.loads(json.dumps(data))
        change(broken)
        path.write_text(json.dumps(broken))
        with pytest.raises(linkdyn.ModelFileError, match=match):
            linkdyn.load_model(str(path))

    bad(lambda d: d["joints"][1].update(type="helical"),
        r"stephenson2.json: joints\[1\].type type must be one of revolute, prismatic")
    bad(lambda d: d["joints"][1].update(type="spherical"),
        r"joints\[1\] spherical joint 'J2': a planar linkage has no spherical joints")
    bad(lambda d: d.update(kind="hyperbolic"), r"kind kind must be one of planar, spherical")
    bad(lambda d: d["joints"][0].update(coordinates=[0.94, 0.24, 0.24]),
        r"joints\[0\] .*spherical or spatial linkage")
    bad(lambda d: d["links"][0].update(joints=["J1", "J99"]),
        r"links\[0\] link 'L1': unknown joint 'J99'")
    bad(lambda d: d["links"][0].update(colour="red"), r"links\[0\] unknown field\(s\): colour")
    bad(lambda d: d.update(linkdyn_linkage=2), "unsupported linkage format version 2")
    bad(lambda d: d["input"].update(joint="J2"),
        "input: joint 'J2' is not on the ground link 'L6'")


def triple_rocker():
    """conftest.triple_rocker_linkage, built."""
    return triple_rocker_linkage().build()


def test_a_limit_position_is_found_and_reversal_traces_the_closed_curve():
    model = triple_rocker()
    # The limits: coupler and rocker in line, |B - D| = 1.2, crank at +-acos(-1/15).
    limit = math.acos(-1.0 / 15.0)
    times = np.linspace(0.0, 10.0, 1001)
    with pytest.raises(linkdyn.SingularConfigurationError) as info:
        linkdyn.kinematics(model, times)
    assert abs(info.value.t - (limit - 1.2)) < 1e-9
    r = linkdyn.kinematics(model, times, at_limit="reverse")
    assert len(r.t) == len(times)
    passed = [t for t, _ in r.limits]
    np.testing.assert_allclose(passed, [limit - 1.2, -limit - 1.2, limit - 1.2], atol=1e-9)
    assert r.t.max() < limit - 1.2 and r.t.min() > -limit - 1.2
    # Branch tracking: the triangle B-C-D keeps its orientation between limits and turns
    # over at each one; positions move by small steps along each branch.
    paths = point_paths(model, r.q)
    b, c, d = paths[("crank", "B")], paths[("coupler", "C")], paths[("rocker", "D")]
    side = np.sign((c - b)[:, 0] * (d - c)[:, 1] - (c - b)[:, 1] * (d - c)[:, 0])
    starts = [0] + [k for _, k in r.limits] + [len(r.t)]
    for k, (i, j) in enumerate(zip(starts, starts[1:])):
        assert np.all(side[i:j] == side[0] * (-1) ** k)
    step = np.abs(np.diff(r.q, axis=0)).max(axis=1)     # step[k]: from row k to row k + 1
    across = [k - 1 for _, k in r.limits]   # the fold lies between these rows: sqrt-fast
    assert np.delete(step, across).max() < 0.05 and step[across].max() < 0.25
    # After two limits the crank is back at its start on the first branch: the curve closes.
    back = starts[2] + int(np.argmin(np.abs(r.t[starts[2]:starts[3]])))
    assert abs(r.t[back]) < 1e-9 and np.abs(r.q[back] - r.q[0]).max() < 1e-12
    with pytest.raises(ValueError, match="at_limit must be 'raise' or 'reverse'"):
        linkdyn.kinematics(model, times, at_limit="turn")


def test_a_linkage_without_coupler_points_tabulates_its_links_and_refuses_dynamics():
    pytest.importorskip("pandas")
    g = Linkage("bare")
    g.revolute("O", (0.0, 0.0))
    g.revolute("A", (0.1, 0.0))
    g.revolute("B", (0.35, 0.25))
    g.revolute("C", (0.4, 0.0))
    g.link("crank", ["O", "A"])
    g.link("coupler", ["A", "B"])
    g.link("rocker", ["B", "C"])
    g.link("base", ["O", "C"], ground=True)
    g.input("O", 1.0)
    model = g.build()
    assert model.marker_names == () and model.description.kinematic
    k = linkdyn.kinematics(model, np.linspace(0.0, 0.5, 6))
    table = k.to_dataframe()
    assert list(table.columns[:4]) == ["crank.x", "crank.y", "crank.angle", "crank.omega"]
    # The crank turns at the input rate about O: its centre at half its length from O.
    np.testing.assert_allclose(np.hypot(table["crank.x"], table["crank.y"]), 0.05, atol=1e-12)
    np.testing.assert_allclose(np.diff(table["crank.angle"]), 0.1, atol=1e-10)
    with pytest.raises(linkdyn.ModelError, match="placeholder masses"):
        linkdyn.simulate(model, 1.0)


@pytest.mark.parametrize("save", [
    lambda path: fourbar_description().save(path),
    lambda path: load_model("jansen").save(path),
    lambda path: linkdyn.modelfile.save(load_model("jansen").description, path),
    lambda path: load_model("heavy_top").save(path),
])
def test_saving_to_a_path_that_is_not_a_file_name_is_refused(save):
    """An int was taken by open() for a file descriptor (a linkage file written into
    whatever descriptor 3 was, then closed), or leaked pathlib's TypeError."""
    with pytest.raises(linkdyn.ArgumentTypeError, match="save: path must be a file name"):
        save(3)
