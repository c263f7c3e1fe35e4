"""Dimensional synthesis (linkdyn.design.synthesis): a four-bar recovered from points of its
own coupler curve, with and without prescribed timing; six-bars (Watt, Stephenson);
designers' constraints reported with their reasons; bad input named."""
import numpy as np
import pytest

import linkdyn
from linkdyn import SynthesisError
from linkdyn.design.synthesis import (fourbar_lengths, function_generation, linkage_parameters,
                                      path_generation)
from linkdyn.errors import ArgumentError
from linkdyn.models.linkages import four_bar

TRUTH = {"A": (0.0, 0.0), "B": (0.1, 0.02), "C": (0.32, 0.3), "D": (0.4, 0.0),
         "P": (0.25, 0.37)}
TIMES = np.linspace(0.3, 6.0, 10)


def fourbar(points, name="fourbar"):
    return four_bar(points, name=name)


def targets():
    grid = np.unique(np.concatenate([np.linspace(0.0, 2 * np.pi, 181), TIMES]))
    k = linkdyn.kinematics(fourbar(TRUTH).build(), grid)
    return k.marker("P")[np.searchsorted(k.t, TIMES)]


def perturbed(size, seed=1):
    rng = np.random.default_rng(seed)
    return fourbar({n: np.array(v) + size * rng.standard_normal(2) for n, v in TRUTH.items()})


def test_fourbar_recovered_from_ten_points_of_its_coupler_curve():
    r = path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=1)
    assert r.residual < 1e-10 and r.failures == ()
    for joint, xy in TRUTH.items():
        for i, axis in enumerate("xy"):
            assert abs(r.parameters[f"joints.{joint}.coordinates.{axis}"] - xy[i]) < 1e-8
    # Exact Jacobians: Gauss-Newton converges in a handful of analyses.
    assert r.evaluations <= 15
    np.testing.assert_allclose(r.achieved, targets(), atol=1e-10)
    # one line, not every parameter and array
    assert repr(r) == (f"<SynthesisResult 'fourbar': 10 parameters, 10 targets, largest "
                       f"error {r.residual:.3g} (tolerance 1e-08), {r.evaluations} analyses, "
                       "1 start "
                       "(0 failed), ok>")


def test_free_timing_finds_the_curve_and_the_times_up_to_a_common_shift():
    r = path_generation(perturbed(0.01), "P", targets(), times=None, starts=1)
    assert r.residual < 1e-9
    shift = r.times - TIMES
    assert np.ptp(shift) < 1e-7      # the input's starting position is free
    assert np.max(np.abs(r.achieved - targets())) < 1e-9


def test_constraints_are_checked_and_their_reasons_given():
    lengths = fourbar_lengths(fourbar(TRUTH))
    assert linkdyn.design.grashof(*lengths).kind == "crank-rocker"
    with pytest.raises(SynthesisError, match="not a double-rocker") as info:
        path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=2,
                        grashof="double-rocker")
    assert len(info.value.failures) == 2
    with pytest.raises(SynthesisError, match="transmission angle at C"):
        path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=1,
                        transmission=("C", 1.4, 1.7))


def test_a_start_that_does_not_assemble_is_reported():
    # The coupler far too short to close the loop: no configuration exists.
    bad = dict(TRUTH, C=(0.12, 0.03))
    with pytest.raises(SynthesisError, match="does not assemble"):
        path_generation(fourbar(bad), "P", targets(), times=TIMES, starts=1)


def test_parameters_default_to_every_joint_coordinate():
    names = linkage_parameters(fourbar(TRUTH))
    assert names[:2] == ["joints.A.coordinates.x", "joints.A.coordinates.y"] and len(names) == 10


@pytest.mark.parametrize("kwargs, match", [
    ({"targets": np.zeros((3, 3))}, "expected \\(k, 2\\) points"),
    ({"marker": "Q"}, "marker 'Q' is not a marker"),
    ({"times": [0.1, 0.2]}, "expected 10 times"),
    ({"times": np.linspace(0.3, 7.0, 10)}, "within the cycle"),
    ({"bounds": {"joints.Z.coordinates.x": (0, 1)}}, "not one of the parameters"),
    # these leaked NumPy's ValueError and a TypeError from the timing search
    ({"targets": "abc"}, "targets must be an array of numbers"),
    ({"targets": np.full((10, 2), np.nan), "times": None}, "targets must be finite"),
    ({"times": [float("nan")] * 10}, "times must be finite"),
    # these leaked AttributeError, IndexError, TypeError and ValueError (from unpacking and
    # from least_squares), or refused every start for a misspelt grashof kind
    ({"bounds": (0.0, 1.0)}, "bounds must be a dict"),
    ({"bounds": {"joints.B.coordinates.x": 0.1}}, "must be \\(low, high\\)"),
    ({"bounds": {"joints.B.coordinates.x": (0.2, 0.1)}}, "low < high"),
    ({"cycle": "x"}, "cycle must be an array of numbers"),
    ({"cycle": (1.0, 0.0)}, "cycle must be \\(start, end\\) with end > start"),
    ({"starts": 0}, "starts must be a positive integer"),
    ({"starts": "8"}, "starts must be a positive integer"),
    ({"spread": -0.1}, "spread"),
    ({"seed": "x"}, "seed must be a non-negative integer"),
    ({"grashof": "crank rocker"}, "grashof must be one of crank-rocker"),
    ({"transmission": (1.4, 1.7)}, "transmission must be \\(joint, low, high\\)"),
    ({"transmission": ("C", 1.7, 1.4)}, "0 <= low < high <= pi"),
    ({"transmission": ("Z", 0.5, 2.5)}, "no joint 'Z'"),
    ({"tol": 0.0}, "tol must be a positive finite number"),
    ({"max_evaluations": 0}, "max_evaluations must be a positive integer"),
])
def test_bad_input_is_named(kwargs, match):
    args = {"linkage": fourbar(TRUTH), "marker": "P", "targets": targets(), "times": TIMES,
            "starts": 1}
    args.update(kwargs)
    with pytest.raises((ArgumentError, linkdyn.ArgumentTypeError, linkdyn.UnknownNameError),
                       match=match):
        path_generation(args.pop("linkage"), args.pop("marker"), args.pop("targets"), **args)


def test_function_generation_reproduces_a_rockers_motion():
    from linkdyn.design.synthesis import function_generation

    grid = np.union1d(np.linspace(0.0, 2 * np.pi, 181), TIMES)
    k = linkdyn.kinematics(fourbar(TRUTH).build(), grid)
    rocker = k.body_angle("rocker")[np.searchsorted(k.t, TIMES)]
    r = function_generation(perturbed(0.01), "rocker", rocker, TIMES, starts=1)
    assert r.residual < 1e-9                       # rad
    np.testing.assert_allclose(r.achieved[:, 0], rocker - rocker[0], atol=1e-9)


def test_motion_generation_carries_the_coupler_through_its_poses():
    from linkdyn.design.synthesis import motion_generation

    grid = np.union1d(np.linspace(0.0, 2 * np.pi, 181), TIMES)
    k = linkdyn.kinematics(fourbar(TRUTH).build(), grid)
    rows = np.searchsorted(k.t, TIMES)
    poses = np.column_stack([k.marker("P")[rows], k.body_angle("coupler")[rows]])
    r = motion_generation(perturbed(0.01), "P", "coupler", poses, times=TIMES, starts=1)
    assert r.residual < 1e-9
    for joint, xy in TRUTH.items():         # a pose sequence fixes the four-bar
        for i, axis in enumerate("xy"):
            assert abs(r.parameters[f"joints.{joint}.coordinates.{axis}"] - xy[i]) < 1e-8


def _moved_linkage(name, joints, size, seed=3):
    """A built-in linkage with the coordinates of ``joints`` moved by ``size`` (normal
    noise), its parameters (their x, y, z) and the true values."""
    from linkdyn.describe import geometric
    from linkdyn.models.linkages import linkage

    data = geometric.to_dict(linkage(name))
    rng = np.random.default_rng(seed)
    truth = {}
    for joint in data["joints"]:
        if joint["name"] in joints:
            for axis, value in zip("xyz", joint["coordinates"]):
                truth[f"joints.{joint['name']}.coordinates.{axis}"] = value
            joint["coordinates"] = list(np.asarray(joint["coordinates"])
                                        + size * rng.standard_normal(3))
    return geometric.from_dict(data), truth


def _space_targets(name, marker, times, cycle):
    from linkdyn.models.linkages import linkage

    grid = np.union1d(np.linspace(cycle[0], cycle[1], 181), times)
    k = linkdyn.kinematics(linkage(name).build(), grid)
    return k.marker(marker)[np.searchsorted(k.t, times)]


def test_a_spatial_linkage_is_recovered_from_points_of_its_platforms_path():
    """The 5-SS (a platform on five spherical-spherical legs, one leg a linear actuator):
    its platform point J11 and a leg's platform joint J8 moved by some 5 cm, and found
    again from eight points in space of J11's path at given actuator strokes. Before,
    targets had to be points in the plane."""
    times, cycle = np.linspace(0.05, 0.5, 8), (0.0, 0.5)
    targets = _space_targets("five_ss", "J11", times, cycle)
    start, truth = _moved_linkage("five_ss", ("J8", "J11"), 0.05)
    r = path_generation(start, "J11", targets, times=times, parameters=list(truth),
                        cycle=cycle, starts=1)
    assert r.residual < 1e-11 and r.achieved.shape == (8, 3)
    assert max(abs(r.parameters[n] - v) for n, v in truth.items()) < 1e-8
    assert r.evaluations <= 20                       # Gauss-Newton with exact Jacobians


def test_a_spherical_linkage_is_recovered_up_to_its_points_radii():
    """A spherical linkage's coupler point and a joint, moved off their places, are found
    again from eight points of the coupler's path on the sphere. The description projects
    its points onto the unit sphere, so a point's radial coordinate moves nothing: the
    directions of the found points are the true ones."""
    times, cycle = np.linspace(0.3, 5.5, 8), (0.0, 2 * np.pi)
    targets = _space_targets("spherical_rrpr", "J5", times, cycle)
    start, truth = _moved_linkage("spherical_rrpr", ("J4", "J5"), 0.003)
    r = path_generation(start, "J5", targets, times=times, parameters=list(truth),
                        cycle=cycle, starts=1)
    assert r.residual < 1e-12
    for joint in ("J4", "J5"):
        found, true = (np.array([d[f"joints.{joint}.coordinates.{a}"] for a in "xyz"])
                       for d in (r.parameters, truth))
        np.testing.assert_allclose(found / np.linalg.norm(found), true / np.linalg.norm(true),
                                   atol=1e-9)


def test_angles_and_planar_constraints_are_refused_in_space():
    from linkdyn.design.synthesis import motion_generation
    from linkdyn.models.linkages import linkage

    five_ss = linkage("five_ss")
    assert linkage_parameters(five_ss)[:3] == [f"joints.J1.coordinates.{a}" for a in "xyz"]
    targets = _space_targets("five_ss", "J11", [0.1, 0.2], (0.0, 0.5))
    with pytest.raises(ArgumentError, match=r"expected \(k, 3\) points of the spatial model"):
        path_generation(five_ss, "J11", targets[:, :2], times=[0.1, 0.2], cycle=(0.0, 0.5))
    with pytest.raises(ArgumentError, match="transmission: a constraint on planar linkages"):
        path_generation(five_ss, "J11", targets, times=[0.1, 0.2], cycle=(0.0, 0.5),
                        transmission=("J8", 0.5, 2.5))
    with pytest.raises(ArgumentError, match="function_generation: a body's angle is planar"):
        function_generation(five_ss, "L6", [0.0, 0.1], [0.1, 0.2], cycle=(0.0, 0.5))
    with pytest.raises(ArgumentError, match="motion_generation: a body's angle is planar"):
        motion_generation(linkage("spherical_rrpr"), "J5", "L2", np.zeros((2, 3)),
                          times=[0.1, 0.2])


def test_a_stephenson_six_bar_with_sliders_is_recovered_from_its_coupler_points():
    # The point-line-plane paper's Stephenson-II six-bar (prismatic joints J3 and J7):
    # its revolute joints moved by about a centimetre, path generation through twelve
    # points of the original's coupler curve at their crank angles finds a linkage that
    # passes through them (its lines' coefficients are free up to scale, so the
    # parameters themselves are not unique).
    from linkdyn.models.linkages import linkage

    g = linkage("stephenson2")
    times = np.linspace(0.3, 6.0, 12)
    grid = np.union1d(np.linspace(0.0, 2 * np.pi, 181), times)
    k = linkdyn.kinematics(g.build(), grid)
    targets = k.marker("J8")[np.searchsorted(k.t, times)]
    data = linkdyn.geometric.to_dict(g)
    rng = np.random.default_rng(2)
    for joint in data["joints"]:
        if joint["type"] != "prismatic":
            joint["coordinates"] = list(np.array(joint["coordinates"])
                                        + 0.01 * rng.standard_normal(2))
    start = linkdyn.geometric.from_dict(data)
    names = [p for p in linkage_parameters(start) if not p.startswith("joints.J7")]
    r = path_generation(start, "J8", targets, times=times, starts=1, parameters=names)
    assert r.residual < 1e-10


WATT = {"A": (0.0, 0.0), "B": (0.1, 0.05), "C": (0.35, 0.3), "D": (0.4, 0.0),
        "E": (0.6, 0.2), "F": (0.75, 0.5), "G": (0.95, 0.15), "P": (0.72, 0.3)}


def watt_six_bar(points):
    """A Watt-II six-bar: the crank-rocker A-B-C-D, whose rocker (C, D, E: ternary) drives
    the four-bar D-E-F-G through the link E-F, which carries the coupler point P; the
    ground (A, D, G) is the other ternary link."""
    from linkdyn.geometric import Linkage

    g = Linkage("watt2")
    for joint in "ABCDEFG":
        g.revolute(joint, tuple(points[joint]))
    g.coupler("P", tuple(points["P"]))
    for name, joints in (("crank", "AB"), ("coupler", "BC"), ("rocker", "CDE"),
                         ("link", "EFP"), ("output", "FG")):
        g.link(name, list(joints))
    g.link("base", ["A", "D", "G"], ground=True)
    g.input("A", rate=1.0)
    return g


def test_a_watt_six_bar_is_recovered_up_to_the_similarity_of_its_first_loop():
    """Every joint moved by about a centimetre, path generation through 24 points of P's
    curve at their crank angles passes through them. The second loop and P come back to
    1e-8 m; the first loop (A, B, C) comes back up to a rotation and scaling about D: the
    rocker's motion, all that P sees of it, does not change when the crank-rocker is so
    transformed (its angles are the same), and the optimum found is such a copy: the same
    complex ratio (A' - D) / (A - D) for A, B and C."""
    times = np.linspace(0.3, 6.0, 24)
    grid = np.union1d(np.linspace(0.0, 2 * np.pi, 181), times)
    k = linkdyn.kinematics(watt_six_bar(WATT).build(), grid)
    goal = k.marker("P")[np.searchsorted(k.t, times)]
    rng = np.random.default_rng(3)
    start = watt_six_bar({n: np.array(v) + 0.01 * rng.standard_normal(2)
                          for n, v in WATT.items()})
    r = path_generation(start, "P", goal, times=times, starts=1)
    assert r.residual < 1e-10 and r.evaluations <= 30

    def point(joint):
        return complex(r.parameters[f"joints.{joint}.coordinates.x"],
                       r.parameters[f"joints.{joint}.coordinates.y"])

    for joint in "DEFGP":
        assert abs(point(joint) - complex(*WATT[joint])) < 1e-8
    ratios = [(point(j) - point("D")) / (complex(*WATT[j]) - complex(*WATT["D"]))
              for j in "ABC"]
    assert max(abs(c - ratios[0]) for c in ratios) < 1e-8


def test_parameters_that_cannot_move_the_targets_are_named():
    # A bar's density changes no position of the driven Jansen linkage: its foot's path
    # cannot be reached through it. (The synthesis differentiates the positions alone, so
    # the sensitivities refuse it first; for a parameter that moves positions but not the
    # targets, see the next test.)
    model = linkdyn.load_model("jansen_driven")
    with pytest.raises(ArgumentError, match=r"'bodies\.L2\.density' do not enter the "
                                            "kinematics"):
        path_generation(model, "foot", np.zeros((3, 2)), times=[1.0, 2.0, 3.0], starts=1,
                        parameters=["bodies.L2.density"])


def test_parameters_that_move_positions_but_not_the_targets_are_named():
    """Two cranks driven side by side, the target a point of the first: the second's length
    moves its own positions, not the targets."""
    from linkdyn import laws

    b = linkdyn.ModelBuilder("two_cranks", gravity=(0.0, 0.0))
    for k, x in ((1, 0.0), (2, 1.0)):
        b.add_ground_point(f"O{k}", (x, 0.0))
        b.add_bar(f"crank{k}", length=0.2, density=1.0, position=(x + 0.1, 0.0), angle=0.0)
        b.add_revolute(f"pin{k}", f"crank{k}.a", f"ground.O{k}")
        b.add_angle_driver(f"motor{k}", f"pin{k}", laws.linear(0.0, -1.0))
    b.add_marker("tip", "crank1.b")
    with pytest.raises(ArgumentError, match="none of the parameters moves the targets.*"
                                            r"bodies\.crank2\.length"):
        path_generation(b.build(), "tip", [[0.2, 0.0], [0.0, 0.2], [-0.2, 0.0]],
                        times=[0.0, 1.0, 2.0], starts=1, parameters=["bodies.crank2.length"])


def test_a_model_without_named_parameters_is_told_to_name_them():
    """Only a Linkage has default design variables; a model (by name) leaked
    linkage_parameters' complaint about its type."""
    with pytest.raises(linkdyn.ArgumentTypeError, match="name them, e.g. parameters="):
        path_generation("jansen_driven", "foot", [[0.0, -0.8], [0.1, -0.8]])


@pytest.mark.parametrize("call", [path_generation, lambda lk, *a: function_generation(
    lk, "rocker", [0.1, 0.2], [0.3, 0.4])])
@pytest.mark.parametrize("bad", [None, 3.0, {"joints": {}}])
def test_a_linkage_that_is_not_one_is_named(call, bad):
    """Neither a Linkage, a Model nor a name: the error names the linkage argument and what
    it got (it used to speak of 'parameters', naming the value as if it were a model)."""
    with pytest.raises(linkdyn.ArgumentTypeError, match=f"linkage must be .* got "
                                                        f"{type(bad).__name__}"):
        call(bad, "P", [[0.0, 0.0], [0.1, 0.0]])


def _interrupt_after(monkeypatch, analyses):
    """Ctrl-C in the synthesis' analysis number ``analyses + 1`` (deterministic)."""
    from linkdyn.design import synthesis

    real, calls = synthesis._kinematic_sensitivities, []

    def analysis(*args):
        calls.append(1)
        if len(calls) > analyses:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(synthesis, "_kinematic_sensitivities", analysis)


def test_ctrl_c_keeps_the_best_linkage_found_so_far(monkeypatch):
    """Interrupted in its fourth analysis, the first start's least squares has made three:
    the result is the best of them (status "interrupted", a RuntimeWarning), better than
    the start, its residual what its linkage achieves."""
    start = perturbed(0.01)
    full = path_generation(start, "P", targets(), times=TIMES, starts=1)
    assert full.evaluations > 4
    _interrupt_after(monkeypatch, 3)
    with pytest.warns(RuntimeWarning, match="interrupted in start 0"):
        r = path_generation(start, "P", targets(), times=TIMES, starts=3)
    assert r.status == "interrupted" and r.starts == 1 and r.evaluations == 3
    assert full.status == "ok"
    first = np.linalg.norm(linkdyn.kinematics(start.build(), TIMES).marker("P") - targets(),
                           axis=1).max()
    assert r.residual < 0.5 * first
    np.testing.assert_allclose(np.linalg.norm(r.achieved - targets(), axis=1).max(),
                               r.residual, rtol=1e-12)


def test_ctrl_c_inside_an_analysis_stops_the_synthesis(monkeypatch):
    """Ctrl-C that lands in a compiled sweep comes back as an interrupted analysis (status
    "interrupted", the times before it), not as a KeyboardInterrupt: the synthesis stops
    there all the same, with the best linkage found so far. Before, the analysis' missing
    times made it a failed design and the synthesis went on."""
    import dataclasses

    from linkdyn.design import sensitivity

    real, calls = sensitivity.kinematics, []

    def analysis(model, times, **options):
        calls.append(1)
        if len(calls) <= 3:
            return real(model, times, **options)
        half = real(model, np.asarray(times)[:len(times) // 2], **options)
        return dataclasses.replace(half, status="interrupted")

    monkeypatch.setattr(sensitivity, "kinematics", analysis)
    start = perturbed(0.01)
    with pytest.warns(RuntimeWarning, match="interrupted in start 0"):
        r = path_generation(start, "P", targets(), times=TIMES, starts=3)
    assert r.status == "interrupted" and r.starts == 1 and r.evaluations == 3
    first = np.linalg.norm(linkdyn.kinematics(start.build(), TIMES).marker("P") - targets(),
                           axis=1).max()
    assert r.residual < 0.5 * first


def test_ctrl_c_pressed_between_analyses_is_not_lost(monkeypatch):
    """Ctrl-C pressed while Python runs between the analyses (here from a finaliser, where
    Python's KeyboardInterrupt would be printed and dropped) stops the synthesis all the
    same, with the best linkage found so far."""
    from conftest import ctrl_c_in_a_finaliser
    from linkdyn.design import synthesis

    real, calls = synthesis._kinematic_sensitivities, []

    def analysis(*args):
        calls.append(1)
        if len(calls) == 4:
            ctrl_c_in_a_finaliser()
        return real(*args)

    monkeypatch.setattr(synthesis, "_kinematic_sensitivities", analysis)
    with pytest.warns(RuntimeWarning, match="interrupted in start 0"):
        r = path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=3)
    assert r.status == "interrupted" and r.starts == 1 and r.evaluations == 3
    import signal
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_interrupted_constraint_check_stops_the_synthesis(monkeypatch):
    """The transmission-angle check analyses a cycle of the solution; a Ctrl-C in that
    analysis (an "interrupted" result) stops the synthesis rather than judging the angle
    on part of the cycle. Before, the partial cycle was judged and the synthesis went on
    (here: to a SynthesisError for its failed transmission angle, two starts later)."""
    import dataclasses

    import linkdyn.solve.kinematics as solve
    from linkdyn.design import synthesis

    real = solve.kinematics

    def analysis(model, times, **options):
        r = real(model, times, **options)
        if len(times) == synthesis.CYCLE_POSITIONS + 1:      # the constraint's cycle
            return dataclasses.replace(r, status="interrupted")
        return r

    monkeypatch.setattr(solve, "kinematics", analysis)
    with pytest.raises(KeyboardInterrupt):
        path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=2,
                        transmission=("C", 1.4, 1.7))


def test_ctrl_c_before_anything_was_analysed_goes_on(monkeypatch):
    _interrupt_after(monkeypatch, 0)
    with pytest.raises(KeyboardInterrupt):
        path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=2)


def test_a_fit_that_misses_its_targets_says_so():
    """Ten points of a four-bar's coupler curve with one of them moved 5 mm off it: no
    four-bar passes through all ten, so the least-squares optimum misses them by
    millimetres; that is reported as "approximate" against the documented tolerance (it
    said "ok" before), while the exact fit of the unmoved points is "ok"."""
    from linkdyn.design.synthesis import TARGET_RTOL

    exact = path_generation(perturbed(0.01), "P", targets(), times=TIMES, starts=1)
    assert exact.status == "ok" and exact.residual <= exact.tolerance
    moved = targets()
    moved[4] += [0.005, 0.0]
    r = path_generation(perturbed(0.01), "P", moved, times=TIMES, starts=1)
    extent = np.linalg.norm(np.ptp(moved, axis=0))
    assert r.tolerance == pytest.approx(TARGET_RTOL * max(1.0, extent))
    assert r.residual > 1e-4 and r.status == "approximate"
    assert "tolerance" in repr(r) and "approximate" in repr(r)
