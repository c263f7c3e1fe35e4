"""Design metrics (linkdyn.design): Grashof's classification of four-bars, and the
transmission angle along a motion against the closed form of a crank-rocker."""

import math

import numpy as np
import pytest

import linkdyn
from linkdyn.design import grashof, transmission_angle

from conftest import fourbar_builder


@pytest.mark.parametrize("lengths, kind", [
    ((4.0, 1.0, 4.0, 3.0), "crank-rocker"),      # ground, input, coupler, output
    ((4.0, 3.0, 4.0, 1.0), "crank-rocker"),      # the output is the crank
    ((1.0, 3.0, 4.0, 3.5), "double-crank"),      # shortest link fixed: a drag link
    ((4.0, 3.0, 1.0, 3.5), "double-rocker"),     # Grashof, shortest link the coupler
    ((4.0, 2.0, 4.0, 2.0), "change-point"),      # a parallelogram: s + l = p + q
    ((2.0, 3.0, 4.0, 6.0), "triple-rocker"),     # not Grashof: 2 + 6 > 3 + 4
])
def test_grashof_classes(lengths, kind):
    g = grashof(*lengths)
    assert g.kind == kind
    s, p, q, l = sorted(lengths)
    assert g.grashof == (s + l < p + q) and math.isclose(g.margin, (p + q) - (s + l),
                                                         abs_tol=1e-12)


def test_grashof_refuses_lengths_that_are_not_positive():
    with pytest.raises(linkdyn.ArgumentError, match="coupler length"):
        grashof(1.0, 1.0, -2.0, 1.0)


def test_transmission_angle_of_a_crank_rocker_is_the_closed_form():
    # The crank-rocker of conftest (ground d = 0.4, crank a = 0.1, coupler b = 0.35, rocker
    # c = 0.3) driven through a turn: at crank angle theta the angle mu at the
    # coupler-rocker pin satisfies b^2 + c^2 - 2 b c cos(mu) = a^2 + d^2 - 2 a d cos(theta)
    # (both are the diagonal from the crank pin to the rocker's pivot), and its extremes are
    # at theta = 0 and pi.
    a, b, c, d = 0.1, 0.35, 0.3, 0.4
    builder = fourbar_builder(crank=a, coupler=b, rocker=c, base=d, theta=1.0)
    builder.add_angle_driver("drive", "O_crank", linkdyn.laws.linear(-1.0, -2 * math.pi))
    model = builder.build()
    assert grashof(d, a, b, c).kind == "crank-rocker"
    k = linkdyn.kinematics(model, np.linspace(0.0, 1.0, 721))
    mu = transmission_angle(k, "B")
    theta = k.body_angle("crank")
    exact = np.arccos((b * b + c * c - a * a - d * d + 2 * a * d * np.cos(theta)) / (2 * b * c))
    np.testing.assert_allclose(mu, exact, atol=1e-10)
    extremes = np.arccos([(b * b + c * c - (d - a) ** 2) / (2 * b * c),
                          (b * b + c * c - (d + a) ** 2) / (2 * b * c)])
    assert abs(mu.min() - extremes[0]) < 1e-4 and abs(mu.max() - extremes[1]) < 1e-4


def test_transmission_angle_names_a_bad_joint():
    k = linkdyn.kinematics("jansen_driven", np.linspace(0.0, 0.1, 3))
    with pytest.raises(linkdyn.UnknownNameError, match="no joint 'nope'"):
        transmission_angle(k, "nope")
    ground_joint = next(j.name for j in k.model.description.joints
                        if "ground" in (j.first[0], j.second[0]))
    with pytest.raises(linkdyn.ArgumentError, match="between two moving links"):
        transmission_angle(k, ground_joint)


A, B, C, D = 0.1, 0.35, 0.3, 0.4       # crank, coupler, rocker, ground of conftest's four-bar


def driven_fourbar(turns_per_second=1.0, gravity=True):
    builder = fourbar_builder(crank=A, coupler=B, rocker=C, base=D, theta=1.0)
    builder.add_angle_driver("drive", "O_crank",
                             linkdyn.laws.linear(-1.0, -2 * math.pi * turns_per_second))
    return builder.build()


def test_mechanical_advantage_is_the_ratio_of_angular_velocities():
    # Power in equals power out: T_out / T_in = w_in / w_out. Independently, the rocker's
    # rate from the loop-closure derivative at each crank angle theta (rocker angle phi):
    # w_out / w_in = a sin(psi - theta) / (c sin(psi - phi)), psi the coupler's angle.
    from linkdyn.design import mechanical_advantage

    k = linkdyn.kinematics(driven_fourbar(), np.linspace(0.0, 1.0, 361))
    ma = mechanical_advantage(k, "crank", "rocker")
    theta, phi, psi = (k.body_angle(n) for n in ("crank", "rocker", "coupler"))
    # rocker.a is its ground end: its u points from C to B; the coupler's from A to B.
    ratio = A * np.sin(psi - theta) / (C * np.sin(psi - phi))
    np.testing.assert_allclose(1.0 / ma, ratio, rtol=1e-9, atol=1e-12)


def test_limit_positions_and_dead_centres_of_a_crank_rocker():
    # The rocker reverses where crank and coupler line up: |O B| = b + a (extended) or b - a
    # (folded); there the rocker's angle follows from the triangle O, C, B.
    from linkdyn.design import dead_centres, limit_positions

    k = linkdyn.kinematics(driven_fourbar(), np.linspace(0.0, 1.0, 3601))
    limits = limit_positions(k, "rocker")
    assert len(limits) == 2
    exact = []
    for diagonal in (B + A, B - A):
        # angle at C between C->O and C->B, with B above the ground line
        gamma = math.acos((C * C + D * D - diagonal * diagonal) / (2 * C * D))
        exact.append(math.pi - gamma)
    angles = sorted(np.mod([p.value for p in limits], 2 * math.pi))
    np.testing.assert_allclose(angles, sorted(np.mod(exact, 2 * math.pi)), atol=1e-6)
    # the same instants are the dead centres of the crank-coupler joint A (0 and pi)
    centres = dead_centres(k, "A")
    assert sorted(p.value for p in centres) == [0.0, math.pi]
    np.testing.assert_allclose(sorted(p.t for p in centres), sorted(p.t for p in limits),
                               atol=1e-6)


def _local(model, body, point):
    spec = next(b for b in model.description.bodies if b.name == body)
    return np.asarray(spec.local_points()[point], dtype=float)


def test_transmission_angle_at_a_slider_link_runs_to_its_other_joint():
    # Stephenson II: link L3 slides on L2 (prismatic J3) and is pinned to L5 at J6, its
    # centre of mass. Its line runs from J6 to its point at the slider J3 (it has no other
    # pin); L5's from J6 to its pin J5. By hand: each line is the body's rotation of the
    # local difference of those points; mu is the angle between the two (it was NaN when
    # L3's line ran to its centre of mass, at the joint itself).
    from linkdyn.design import dead_centres

    k = linkdyn.kinematics("stephenson2", np.linspace(0.0, 2 * np.pi, 361))
    mu = transmission_angle(k, "J6")
    arms = []
    for body, far in (("L3", "J3"), ("L5", "J5")):
        d = _local(k.model, body, far) - _local(k.model, body, "J6")
        th = np.asarray(k.body_angle(body))
        arms.append(np.column_stack([np.cos(th) * d[0] - np.sin(th) * d[1],
                                     np.sin(th) * d[0] + np.cos(th) * d[1]]))
    cos = np.sum(arms[0] * arms[1], axis=1) / (np.linalg.norm(arms[0], axis=1)
                                               * np.linalg.norm(arms[1], axis=1))
    np.testing.assert_allclose(mu, np.arccos(cos), atol=1e-9)
    assert np.all(np.isfinite(mu)) and np.ptp(mu) > 0.1     # it moves: 19 to 39 degrees
    assert dead_centres(k, "J6") == []      # mu stays inside (0, pi)


def test_a_link_without_a_line_is_named_and_left_out_of_the_report():
    # A disc pinned at its centre of mass to the crank's end, with no other point: the
    # angle between crank and disc at that pin has no second line to measure.
    from linkdyn.design.report import cycle_metrics

    b = linkdyn.ModelBuilder("crank_and_disc")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("crank", length=0.2, mass=1.0, position=(0.1, 0.0), angle=0.0)
    b.add_body("disc", mass=0.5, inertia=0.01, points={"pin": (0.0, 0.0)},
               position=(0.2, 0.0), angle=0.0)
    b.add_revolute("O_crank", "crank.a", "ground.O")
    b.add_revolute("pin", "crank.b", "disc.pin")
    b.add_angle_driver("drive", "O_crank", linkdyn.laws.linear(0.0, 2 * math.pi))
    b.add_angle_driver("spin", "pin", linkdyn.laws.linear(0.0, 3.0))
    k = linkdyn.kinematics(b.build(), np.linspace(0.0, 1.0, 11))
    with pytest.raises(linkdyn.ArgumentError, match="link 'disc' of joint 'pin'"):
        transmission_angle(k, "pin")
    assert "pin" not in cycle_metrics(k).transmission


def test_a_body_that_does_not_turn_has_no_limit_positions():
    # Stephenson II's L5 slides on a fixed guide (prismatic J7 to the ground): its angle is
    # constant, so it never reverses; L2, a rocker, reverses twice a turn.
    from linkdyn.design import limit_positions
    from linkdyn.design.report import cycle_metrics

    k = linkdyn.kinematics("stephenson2", np.linspace(0.0, 2 * np.pi, 361))
    assert np.ptp(k.body_angle("L5")) == 0.0
    assert limit_positions(k, "L5") == []
    report = cycle_metrics(k)
    assert "L5" not in report.limits and len(report.limits["L2"]) == 2


class _Curve:
    """A result-like record of a parametric curve, for the coupler-curve geometry."""

    class model:
        marker_dimension = 2

    def __init__(self, x, dx, n=3601):
        self.t = np.linspace(0.0, 2 * math.pi, n)
        self._p = np.column_stack(x(self.t))
        self._v = np.column_stack(dx(self.t))

    def marker(self, name):
        return self._p

    def marker_velocity(self, name):
        return self._v


def test_coupler_curve_features_on_curves_with_known_ones():
    from linkdyn.design import coupler_curve

    # Bernoulli's lemniscate crosses itself once, at the origin (t = pi/2 and 3 pi/2).
    lemniscate = _Curve(lambda t: (np.cos(t) / (1 + np.sin(t) ** 2),
                                   np.sin(t) * np.cos(t) / (1 + np.sin(t) ** 2)),
                        lambda t: (np.gradient(np.cos(t) / (1 + np.sin(t) ** 2), t),
                                   np.gradient(np.sin(t) * np.cos(t) / (1 + np.sin(t) ** 2), t)))
    f = coupler_curve(lemniscate, "P")
    assert f.closed and len(f.double_points) == 1
    t1, t2, x, y = f.double_points[0]
    assert abs(x) < 1e-12 and abs(y) < 1e-12
    np.testing.assert_allclose(sorted([t1, t2]), [math.pi / 2, 3 * math.pi / 2], atol=1e-9)
    assert f.width == pytest.approx(2.0, abs=1e-6) and f.cusps == ()
    # The deltoid has three cusps, at t = 0, 2 pi/3, 4 pi/3, and no double point.
    deltoid = _Curve(lambda t: (2 * np.cos(t) + np.cos(2 * t), 2 * np.sin(t) - np.sin(2 * t)),
                     lambda t: (-2 * np.sin(t) - 2 * np.sin(2 * t),
                                2 * np.cos(t) - 2 * np.cos(2 * t)))
    f = coupler_curve(deltoid, "P")
    assert f.double_points == ()
    np.testing.assert_allclose(sorted({round(c[0] % (2 * math.pi), 9) for c in f.cusps}),
                               [0.0, 2 * math.pi / 3, 4 * math.pi / 3], atol=1e-9)
    assert f.length == pytest.approx(16.0, rel=1e-5)       # a deltoid's length: 16 r


def test_a_coupler_curve_traced_more_than_once_is_described_over_one_cycle():
    """Over two and a half turns of the crank the curve is the one turn's: its length,
    extent and (no) double points, and closed. The rows after the first turn retrace it,
    and their segments crossing the first pass's were counted as 207 double points, with
    twice the length."""
    from linkdyn.design import coupler_curve

    one = coupler_curve(linkdyn.kinematics("crank_rocker", np.linspace(0.0, 2 * np.pi, 361)),
                        "P")
    for turns in (2, 2.5):
        k = linkdyn.kinematics("crank_rocker",
                               np.linspace(0.0, turns * 2 * np.pi, int(turns * 360) + 1))
        c = coupler_curve(k, "P")
        assert c.closed and c.double_points == () and len(c.points) == 361
        assert c.length == pytest.approx(one.length, rel=1e-12)
        np.testing.assert_allclose(c.extent, one.extent, rtol=1e-12)


def test_the_cycle_report_of_several_turns_is_the_first_turns():
    """Two and a half turns of the crank-rocker report what one turn does: the same dead
    centres and limit positions, once each (they were listed for every pass), on the first
    turn's rows."""
    from linkdyn.design.report import cycle_metrics

    one = cycle_metrics(linkdyn.kinematics("crank_rocker", np.linspace(0.0, 2 * np.pi, 361)))
    more = cycle_metrics(linkdyn.kinematics("crank_rocker",
                                            np.linspace(0.0, 5 * np.pi, 901)))
    assert len(more.t) == len(one.t) == 361
    assert more.dead_centres == one.dead_centres and more.limits == one.limits
    assert sum(map(len, one.dead_centres.values())) == 2
    assert sum(map(len, one.limits.values())) == 4
    for joint, mu in one.transmission.items():
        np.testing.assert_allclose(more.transmission[joint], mu, rtol=1e-12)


def test_input_torque_from_kinetostatics_is_the_drivers_effort_in_a_simulation():
    from linkdyn.design import input_torque

    model = driven_fourbar()
    times = np.linspace(0.0, 1.0, 101)
    k = linkdyn.kinematics(model, times)
    torque = input_torque(k, "drive")
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, t_out=times, q0=k.q[0], v0=k.v[0])
    np.testing.assert_allclose(torque, r.driver_effort("drive"), atol=1e-6 * np.abs(torque).max())
    with pytest.raises(linkdyn.ArgumentError, match="no driver 'nope'"):
        input_torque(k, "nope")
    with pytest.raises(linkdyn.ModelError, match="kinematic only"):
        input_torque(linkdyn.kinematics("crank_rocker", [0.0, 0.1]), "input")


def test_cycle_report_and_the_command(tmp_path, capsys):
    from linkdyn.cli import main
    from linkdyn.design.report import cycle_metrics

    k = linkdyn.kinematics(driven_fourbar(), np.linspace(0.0, 1.0, 721))
    report = cycle_metrics(k)
    assert set(report.transmission) == {"A", "B"}
    np.testing.assert_allclose(report.transmission["B"], transmission_angle(k, "B"))
    assert set(report.limits) >= {"rocker"} and "crank" not in report.limits
    assert report.curves["P"].closed and set(report.torque) == {"drive"}
    assert main(["kinematics", "crank_rocker", "--metrics", "--plot", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    import re

    low, high = map(float, re.search(r"transmission angle at C: ([\d.]+) to ([\d.]+) deg",
                                     out).groups())
    mu = transmission_angle(linkdyn.kinematics("crank_rocker",
                                               np.linspace(0.0, 2 * np.pi, 361)), "C")
    assert abs(low - np.degrees(mu.min())) < 0.006 and abs(high - np.degrees(mu.max())) < 0.006
    assert "rocker reverses" in out and "path of P" in out
    assert (tmp_path / "metrics.png").stat().st_size > 0


@pytest.mark.parametrize("call", [
    lambda d, r: d.transmission_angle(r, "C"),
    lambda d, r: d.dead_centres(r, "C"),
    lambda d, r: d.limit_positions(r, "rocker"),
    lambda d, r: d.mechanical_advantage(r, "crank", "rocker"),
    lambda d, r: d.coupler_curve(r, "P"),
    lambda d, r: d.input_torque(r, "motor"),
    lambda d, r: d.cycle_metrics(r),
])
@pytest.mark.parametrize("bad", [None, "crank_rocker", np.zeros(3)])
def test_metrics_name_themselves_when_not_given_a_result(call, bad):
    """Each metric refuses what is not a kinematics or simulation result with an error that
    names the metric (it leaked an AttributeError)."""
    from linkdyn import design

    with pytest.raises(linkdyn.ArgumentTypeError, match="expected the result of"):
        call(design, bad)


def test_metrics_on_a_spatial_result_name_the_metric_asked_for():
    """dead_centres on a spatial linkage named transmission_angle (which it calls)."""
    from linkdyn.design import dead_centres
    from linkdyn.models.spatial import spatial_slider_crank

    k = linkdyn.kinematics(spatial_slider_crank(), np.linspace(0.0, 1.0, 5))
    with pytest.raises(linkdyn.ModelError, match="^dead_centres: planar models only"):
        dead_centres(k, "J1")


@pytest.mark.parametrize("cusp_speed", ["fast", -1e-3, float("nan"), [1e-3]])
def test_coupler_curve_refuses_a_bad_cusp_speed(cusp_speed):
    from linkdyn.design import coupler_curve

    k = linkdyn.kinematics("crank_rocker", np.linspace(0.0, 2 * np.pi, 37))
    with pytest.raises(linkdyn.ArgumentError, match="cusp_speed"):
        coupler_curve(k, "P", cusp_speed)
    assert coupler_curve(k, "P", 0).cusps == ()       # 0: no cusps asked for


def test_sensitivities_refuse_times_at_that_are_not_numbers():
    with pytest.raises(linkdyn.ArgumentError, match="at must be an array of numbers"):
        linkdyn.kinematic_sensitivities("jansen_driven", ["bodies.L3.length"], [0.0, 0.1],
                                        at="x")
