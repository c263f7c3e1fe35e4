"""Errors a user provokes through the Python API are linkdyn's own (``except
linkdyn.LinkdynError`` catches them) and also the builtin class Python code expects, and
their messages say what was wrong with what was given."""

import sys

import numpy as np
import pytest

import linkdyn
from linkdyn.design import synthesis
from linkdyn.errors import ArgumentError, ArgumentTypeError, UnknownNameError


@pytest.fixture(scope="module")
def jansen():
    return linkdyn.load_model("jansen")


@pytest.mark.parametrize("call, builtin", [
    (lambda m: linkdyn.simulate(m, -1.0), ValueError),
    (lambda m: linkdyn.simulate(m, 1.0, rtol=2.0), ValueError),
    (lambda m: linkdyn.simulate(m, 1.0, record=[1]), TypeError),
    (lambda m: linkdyn.consistent_state(m, q=np.zeros(3)), ValueError),
    (lambda m: linkdyn.equilibrium(m, tol=-1.0), ValueError),
    (lambda m: linkdyn.events.marker_crosses("P3", "w", 0.0), ValueError),
    (lambda m: linkdyn.simulate(m, 1.0, events=[linkdyn.events.marker_crosses("P3", "z", 0.0)]),
     ValueError),
    (lambda m: m.marker_index("nope"), KeyError),
    (lambda m: m.phi(np.zeros(5)), ValueError),
])
def test_argument_errors_are_linkdyn_errors_and_builtin_ones(jansen, call, builtin):
    with pytest.raises(linkdyn.LinkdynError) as caught:
        call(jansen)
    assert isinstance(caught.value, builtin)
    assert isinstance(caught.value, (ArgumentError, ArgumentTypeError, UnknownNameError))


@pytest.mark.parametrize("call", [
    # each of these leaked a bare TypeError (an unhashable name, a comparison with a
    # string, a path that is not one) or a ValueError that was not a LinkdynError, or
    # passed unchecked where nothing compared it (swinging_at without contacts)
    lambda r: r.element_force(["S"]),
    lambda r: r.element_work(["S"]),
    lambda r: r.swinging_at("late"),
    lambda r: r.snapshot(float("nan")),
    lambda r: r.to_html(3),
    lambda r: r.animate(None),
    lambda r: r.to_dataframe(markers=3),
])
def test_result_accessors_refuse_bad_arguments_with_linkdyn_errors(jansen, call):
    with pytest.raises(linkdyn.LinkdynError):
        call(linkdyn.simulate(jansen, 0.05, dt_out=0.01))


@pytest.mark.parametrize("name", ["jansen", "heavy_top", "five_ss"])
@pytest.mark.parametrize("call", [
    # a model's numeric methods given a string, None, a wrong length or a string for t
    # leaked NumPy's ValueError, IndexError or reshape errors and Cython's TypeError
    lambda m: m.phi("nope"),
    lambda m: m.phi_q(m.q0, "x"),
    lambda m: m.gamma(m.q0, m.q0, None),
    lambda m: m.force(m.q0, [1.0, 2.0]),
    lambda m: m.energy(m.q0, m.q0, "x"),
    lambda m: m.marker_positions(np.zeros(3)),
    lambda m: m.marker_velocities(None),
    lambda m: m.orientation_cosines("nope"),
    lambda m: m.joint_spec(None),
    lambda m: m.save(None),
])
def test_model_methods_refuse_bad_arguments_with_linkdyn_errors(name, call):
    with pytest.raises(linkdyn.LinkdynError):
        call(linkdyn.load_model(name))


@pytest.mark.parametrize("options, match", [
    ({"q0": "abc"}, "q must be an array of 44 numbers"),      # leaked NumPy's ValueError
    ({"t0": "x"}, "t0 must be a finite number"),               # likewise
    ({"swinging": 3}, "swinging must be a contact's name"),    # leaked a TypeError
    ({"v0": [float("nan")] * 44}, r"coordinate 'L1.x' is not finite \(nan\)"),
])
def test_simulate_names_bad_start_options(jansen, options, match):
    with pytest.raises(ArgumentError, match=match):
        linkdyn.simulate(jansen, 0.01, **options)


@pytest.mark.parametrize("call", [
    # each leaked NumPy's ValueError or UFuncTypeError, or a TypeError, before
    lambda: linkdyn.kinematics("jansen_driven", [0.0, 0.1], q0="abc"),
    lambda: linkdyn.kinematics("jansen_driven", [0.0, 0.1], max_iterations="x"),
    lambda: linkdyn.equilibrium("jansen", t="x"),
    lambda: linkdyn.modes("jansen", t="x"),
    lambda: linkdyn.assembly_modes("jansen_driven", t="x"),
    lambda: linkdyn.consistent_state("jansen", hold=3),
    lambda: linkdyn.consistent_state("jansen", tol="x"),
])
def test_solvers_name_bad_options(call):
    with pytest.raises(linkdyn.LinkdynError):
        call()


def test_unknown_names_read_as_sentences(jansen):
    r = linkdyn.simulate(jansen, 0.05)
    with pytest.raises(UnknownNameError) as caught:
        r.marker("nope")
    # KeyError would show the message in quotes; the names the model has are listed.
    assert str(caught.value) == "model 'jansen' has no marker 'nope' (markers: P3, foot)"


def test_times_of_the_wrong_shape_are_named_as_such():
    model = linkdyn.load_model("jansen_driven")
    with pytest.raises(ArgumentError, match=r"1-D array of times .* shape \(3, 2\)"):
        linkdyn.kinematics(model, np.zeros((3, 2)))


def test_a_point_given_as_a_matrix_says_its_shape():
    b = linkdyn.ModelBuilder("m")
    with pytest.raises(linkdyn.ModelError, match=r"position must be a pair .* shape \(2, 2\)"):
        b.add_bar("a", length=1.0, density=1.0, position=np.zeros((2, 2)))


def test_solvers_take_a_model_by_name_as_sweeps_do(jansen):
    by_name = linkdyn.simulate("jansen", 0.05, dt_out=0.01)
    by_model = linkdyn.simulate(jansen, 0.05, dt_out=0.01)
    np.testing.assert_array_equal(by_name.q, by_model.q)
    state = linkdyn.consistent_state("jansen")
    np.testing.assert_array_equal(state.q, linkdyn.consistent_state(jansen).q)
    k = linkdyn.kinematics("jansen_driven", np.linspace(0.0, 0.1, 11))
    assert k.q.shape == (11, 44)
    with pytest.raises(linkdyn.ModelFileError, match="unknown model"):
        linkdyn.simulate("no_such_model", 1.0)
    with pytest.raises(ArgumentTypeError, match="built-in model's name"):
        linkdyn.simulate(42, 1.0)


def test_errors_of_big_models_list_a_few_names_and_how_many_more():
    # A model of 2,000 bars has 2,000 joints: an error names what there is without
    # printing every one of them.
    model = linkdyn.chain(2000)
    with pytest.raises(linkdyn.ArgumentError) as info:
        linkdyn.simulate(model, 1e-4, record=linkdyn.Record(joints=["J0"]))
    message = str(info.value)
    assert "R0, R1, R2" in message and "(1980 more)" in message and len(message) < 400
    with pytest.raises(linkdyn.UnknownNameError) as info:
        model.joint_spec("J0")
    assert "(1980 more)" in str(info.value)


def _fourbar():
    from linkdyn.models.linkages import four_bar

    return four_bar({"A": (0, 0), "B": (0.5, 1.0), "C": (2.5, 1.5), "D": (2.0, 0.0),
                     "P": (1.5, 2.0)})


def _coordinate_driver_axis():
    b = linkdyn.ModelBuilder("m")
    b.add_bar("b", length=1.0, density=1.0, position=(0.5, 0.0), angle=0.0)
    b.add_coordinate_driver("d", "b.a", np.array(["x"]), 0.0)


def _link_ground():
    g = linkdyn.geometric.Linkage("l")
    g.revolute("A", (0.0, 0.0))
    g.revolute("B", (1.0, 0.0))
    g.link("L", ["A", "B"], ground=np.zeros((2, 2)))


_PENDULUM, _DRIVEN = "iftomm_a01", "jansen_driven"

#: The fuzzing run's argument escapes: (call, the argument its message names). Each escaped
#: as a bare TypeError, ValueError or OverflowError (or, for starts=2**63, never ended).
ESCAPES = {
    "events=0.5": (lambda: linkdyn.simulate(_PENDULUM, 0.1, events=0.5), "events"),
    "project_output=array": (lambda: linkdyn.simulate(
        _PENDULUM, 0.1, project_output=np.array([1, 0])), "project_output"),
    "proportional=array": (lambda: linkdyn.simulate(
        _PENDULUM, 0.1, proportional=np.array([1, 0])), "proportional"),
    "max_iterations=2**63": (lambda: linkdyn.kinematics(
        _DRIVEN, [0.0, 0.1], max_iterations=2**63), "max_iterations"),
    "on_singular=array": (lambda: linkdyn.kinematics(
        _DRIVEN, [0.0, 0.1], on_singular=np.array(["raise"])), "on_singular"),
    "at_limit=array": (lambda: linkdyn.kinematics(
        _DRIVEN, [0.0, 0.1], at_limit=np.array(["raise", "x"])), "at_limit"),
    "state=1.0": (lambda: linkdyn.consistent_state(_PENDULUM, state=1.0), "state"),
    **{f"kinematic_sensitivities parameters={p!r}": (
        lambda p=p: linkdyn.kinematic_sensitivities(_DRIVEN, p, [0.0, 0.1]), "parameters")
       for p in (None, 0, 1.5)},
    **{f"simulation_sensitivities parameters={p!r}": (
        lambda p=p: linkdyn.simulation_sensitivities(_PENDULUM, p, 0.1), "parameters")
       for p in (None, 0, 1.5)},
    **{f"path_generation parameters={p!r}": (
        lambda p=p: synthesis.path_generation(_fourbar(), "P", np.zeros((3, 2)),
                                            parameters=p), "parameters")
       for p in (0, 1.5)},
    "simulation_sensitivities t_end=2**63+": (lambda: linkdyn.simulation_sensitivities(
        _PENDULUM, ["bodies.pendulum.mass"], float("inf")), "t_end"),
    "path_generation marker=array": (lambda: synthesis.path_generation(
        _fourbar(), np.array(["P"]), np.zeros((3, 2))), "marker"),
    "assembly_modes seed=0.0": (lambda: linkdyn.assembly_modes(_DRIVEN, seed=0.0), "seed"),
    "assembly_modes seed=-5": (lambda: linkdyn.assembly_modes(_DRIVEN, seed=-5), "seed"),
    "assembly_modes starts=2**63": (lambda: linkdyn.assembly_modes(_DRIVEN, starts=2**63),
                                    "starts"),
    "periodic_orbit swinging=1.0": (lambda: linkdyn.periodic_orbit(
        "walker_gait1", linkdyn.events.passes("foot1"), swinging=1.0), "swinging"),
    "periodic_orbit translation=array": (lambda: linkdyn.periodic_orbit(
        "walker_gait1", linkdyn.events.passes("foot1"), translation=np.array(["x"])),
        "translation"),
    "sweep run=array": (lambda: linkdyn.sweep(_PENDULUM, {"rtol": [1e-8]},
                                              run=np.array(["simulate"])), "run"),
    "sweep executor=array": (lambda: linkdyn.sweep(_PENDULUM, {"rtol": [1e-8]},
                                                   executor=np.array(["serial"])),
                             "executor"),
}


@pytest.mark.parametrize("case", list(ESCAPES))
def test_bad_arguments_are_refused_by_name(case):
    if case.startswith("sweep"):
        pytest.importorskip("pandas")    # (the wheel's test environment has none)
    call, argument = ESCAPES[case]
    with pytest.raises((ArgumentError, ArgumentTypeError)) as info:
        call()
    assert argument in str(info.value)


@pytest.mark.parametrize("call, what", [(_coordinate_driver_axis, "axis must be 'x' or 'y'"),
                                        (_link_ground, "ground must be True or False")])
def test_builder_arguments_of_the_wrong_type_are_model_errors(call, what):
    # builders refuse what they are given with ModelError, naming the element
    with pytest.raises(linkdyn.ModelError, match=what):
        call()


def test_size_checks_follow_the_process_memory_limit(tmp_path):
    """Under an address-space limit (ulimit -v) the up-front size checks compare with it,
    not with the machine's memory: a chain of 200,000 bars (some 1.6 GB to build) is
    refused at once in a process limited to 2 GiB, where it would pass on the machine's
    memory and then fail with a bare MemoryError."""
    import subprocess
    import sys

    pytest.importorskip("resource")
    script = tmp_path / "limited.py"
    script.write_text(
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, resource.RLIM_INFINITY))\n"
        "import linkdyn\n"
        "from linkdyn.compile.model import memory_limit\n"
        "print('LIMIT', memory_limit())\n"
        "try:\n"
        "    linkdyn.chain(200_000)\n"
        "except linkdyn.ModelError as e:\n"
        "    print('REFUSED', e)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    limit = float(run.stdout.split("LIMIT", 1)[1].split()[0])
    assert limit == 2**30                        # half the 2 GiB allowed
    assert "REFUSED chain: 200000 bars need about 1.49 GiB" in run.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
@pytest.mark.parametrize("call", ["consistent_state", "simulate"])
def test_a_model_too_big_for_the_process_is_a_named_out_of_memory_error(tmp_path, call):
    """20,000 copies of one pin (40,001 rows on 4 coordinates) passed the up-front size
    checks; the projection's factorisation then filled far beyond a 3 GiB address space
    and escaped as a bare MemoryError (or CHOLMOD's own error). The rows on one coordinate
    fill a dense block of 1.6e9 entries in Phi_q M^-1 Phi_q^T: an OutOfMemoryError (a
    MemoryError too) says so before any factorisation, naming the model."""
    import subprocess

    script = tmp_path / "big.py"
    script.write_text(
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))\n"
        "import linkdyn\n"
        "b = linkdyn.ModelBuilder('dup')\n"
        "b.add_ground_point('O', (0.0, 0.0))\n"
        "b.add_bar('bar', length=1.0, density=1.0, position=(0.5, 0.0), angle=0.0)\n"
        "for k in range(20000):\n"
        "    b.add_revolute(f'pin{k}', 'bar.a', 'ground.O')\n"
        "m = b.build()\n"
        "try:\n"
        f"    linkdyn.{call}(m, {'0.1, ' if call == 'simulate' else ''}redundant='allow')\n"
        "except linkdyn.OutOfMemoryError as e:\n"
        "    print('NAMED', isinstance(e, MemoryError), e)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "NAMED True" in run.stdout and "model 'dup'" in run.stdout
    assert "has 40001 constraint rows on one coordinate" in run.stdout
