"""Fuzzing (hypothesis): mutated model files (planar and spatial), arbitrary text and bytes,
and builder calls (planar and spatial) with arbitrary arguments may only raise linkdyn's
documented exceptions (LinkdynError and its subclasses: ModelError, ModelFileError,
AssemblyError, ...), never crash or leak a TypeError, OverflowError, RecursionError,
MemoryError or the like.

The suite runs a hundred cases per test (integrating ones a quarter of that, at least 50);
LINKDYN_FUZZ_EXAMPLES sets the number per test for a longer hunt, e.g.
``LINKDYN_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py``, and where it is set the slow
test ``test_a_longer_hunt_finds_nothing`` also runs five times that many.
"""

import copy
import json
import math
import os

import pytest

import linkdyn
from linkdyn import modelfile
from linkdyn.description import ModelBuilder
from linkdyn.errors import LinkdynError
from linkdyn.model import compile_model
from linkdyn.models import _builtin_file
from linkdyn.models.linkages import linkage

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("LINKDYN_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SEEDS = {name: _builtin_file(name) for name in ("jansen", "block_on_incline", "walker_gait1")}
# Spatial model files (their own form, "space": "spatial"): bodies with inertia tensors and
# orientation matrices, joints with axes, a servo and flexible joints with rotors.
SEEDS.update({name: json.loads(json.dumps(modelfile.to_dict(linkdyn.load_model(name).description)))
              for name in ("heavy_top", "flexible_arm")})
# Linkage files of points, lines and planes: planar, spherical, spatial.
LINKAGE_SEEDS = {name: linkdyn.geometric.to_dict(linkage(name))
                 for name in ("stephenson2", "spherical_rrpr", "five_ss")}

# Values a careless or hostile file may hold where a number, name or list is expected.
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, -1, 2**63, 10**400, 1e-320, 1e308, -1e308, 5e-324]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["bar", "body", "revolute", "prismatic", "linear", "constant", "L1",
                     "J1", "O", "ground.O", "L1.a", "x", "y", "angle", "slide"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def _paths(node, prefix=()):
    """Every path (tuple of keys and indices) into a decoded JSON document."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _mutate(doc, path, action, value):
    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if action == "delete":
        del parent[key]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(parent[key]))
    else:
        parent[key] = value
    return doc


def _readable(exc):
    """Messages speak plain numbers: no numpy reprs such as np.float64(1.0)."""
    text = str(exc)
    assert "np.float64(" not in text and "np.int64(" not in text, text


def _load_and_assemble(text):
    """What a user does with a file: load, compile, assemble the initial state."""
    try:
        model = compile_model(modelfile.loads(text, path="<fuzz>"))
        linkdyn.consistent_state(model)
    except LinkdynError as exc:
        _readable(exc)


def _load_and_run(text, times=None):
    """Load any model or linkage file and run it briefly: a kinematic sweep of a linkage or
    a kinematic description, a short simulation of a model with dynamics, planar or spatial
    (contacts and friction included). Only documented errors may come out, and what a run
    returns is finite."""
    import numpy as np

    try:
        model = compile_model(modelfile.loads(text, path="<fuzz>"))
        if not model.dynamic or getattr(model.description, "kinematic", True):
            k = linkdyn.kinematics(model, np.linspace(0.0, 0.05, 6), at_limit="reverse",
                                   on_singular="continue")
            assert np.all(np.isfinite(k.q))
        else:
            r = linkdyn.simulate(model, 0.05, rtol=1e-6, atol=1e-6, dt_out=0.01,
                                 max_steps=3000)
            assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.energy))
    except LinkdynError as exc:
        _readable(exc)


@FUZZ
@given(seed=st.sampled_from(sorted(SEEDS)), data=st.data())
def test_mutated_model_files_raise_only_documented_errors(seed, data):
    _load_and_assemble(_mutated(SEEDS[seed], data))


def _mutated(doc, data):
    """The document after one to three random mutations, as file text."""
    n_mutations = data.draw(st.integers(1, 3))
    for _ in range(n_mutations):
        paths = list(_paths(doc))
        path = data.draw(st.sampled_from(paths))
        action = data.draw(st.sampled_from(["replace", "delete", "duplicate"]))
        if not path:
            action = "replace"
        doc = _mutate(doc, path, action, data.draw(values))
    return json.dumps(doc, allow_nan=True)


@FUZZ
@given(seed=st.sampled_from(sorted(LINKAGE_SEEDS)), data=st.data())
def test_mutated_linkage_files_raise_only_documented_errors(seed, data):
    _load_and_run(_mutated(LINKAGE_SEEDS[seed], data))


RUN_EXAMPLES = max(50, EXAMPLES // 4)     # each case integrates: fewer of them


@settings(max_examples=RUN_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(["block_on_incline", "walker_gait1"]), data=st.data())
def test_mutated_contact_models_run_or_raise_documented_errors(seed, data):
    # Contacts, friction and the walker's swinging feet, mutated and then simulated: the
    # stick-slip decisions (an LCP) meet whatever the mutation made of the model.
    _load_and_run(_mutated(SEEDS[seed], data))


@settings(max_examples=RUN_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(["heavy_top", "flexible_arm"]), data=st.data())
def test_mutated_spatial_models_run_or_raise_documented_errors(seed, data):
    # Spatial bodies (inertia tensors, orientations), joints with axes, a servo and flexible
    # joints with rotors, mutated and then simulated (the other model files are only
    # loaded and assembled).
    _load_and_run(_mutated(SEEDS[seed], data))


@FUZZ
@given(text=st.one_of(st.text(max_size=200),
                      st.builds(lambda n: "[" * n + "]" * n, st.integers(1, 100_000)),
                      st.builds(lambda n: '{"linkdyn_model": ' + "9" * n + "}",
                                st.integers(1, 6000))))
def test_arbitrary_text_raises_only_documented_errors(text):
    _load_and_assemble(text)


@FUZZ
@given(blob=st.binary(max_size=200))
def test_arbitrary_bytes_in_a_file_raise_only_documented_errors(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("fuzz") / "model.json"
    path.write_bytes(blob)
    try:
        compile_model(modelfile.load(path))
    except LinkdynError as exc:
        _readable(exc)


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0.0, 1.0, -1.0, 1e200, 1e-320, 10**400, True]),
                    st.integers(-10, 10**30), st.text(max_size=4), st.none())
points = st.one_of(st.tuples(numbers, numbers), st.lists(numbers, max_size=3), numbers)
names = st.one_of(st.sampled_from(["A", "B", "C", "O", "J", "ground.O", "A.a", "B.b", "A.b"]),
                  st.text(max_size=6), st.lists(st.text(max_size=3), max_size=2),
                  st.dictionaries(st.text(max_size=2), st.integers(), max_size=1), st.none())


@FUZZ
@given(calls=st.lists(st.one_of(
    st.tuples(st.just("ground"), names, points),
    st.tuples(st.just("bar"), names, numbers, numbers, points, points),
    st.tuples(st.just("body"), names, numbers, numbers, points),
    st.tuples(st.just("revolute"), names, names, names),
    st.tuples(st.just("prismatic"), names, names, names, numbers),
    st.tuples(st.just("angle_driver"), names, names, numbers),
    st.tuples(st.just("marker"), names, names),
    st.tuples(st.just("gravity"), points),
), max_size=8))
def test_builder_calls_raise_only_documented_errors(calls):
    def apply(b, kind, args):
        if kind == "ground":
            b.add_ground_point(*args)
        elif kind == "bar":
            name, length, density, position, u = args
            b.add_bar(name, length=length, density=density, position=position, u=u)
        elif kind == "body":
            name, mass, inertia, position = args
            b.add_body(name, mass=mass, inertia=inertia, position=position)
        elif kind == "revolute":
            b.add_revolute(*args)
        elif kind == "prismatic":
            b.add_prismatic(*args)
        elif kind == "angle_driver":
            name, joint, rate = args
            b.add_angle_driver(name, joint, linkdyn.laws.linear(0.0, rate))
        elif kind == "marker":
            b.add_marker(*args)
        else:
            b.set_gravity(*args)

    _replay(ModelBuilder("fuzz"), calls, apply)


def _replay(builder, calls, apply):
    """Make the calls on the builder (``apply(builder, kind, args)``), each of which may only
    raise a documented error, then build and assemble what they made."""
    for kind, *args in calls:
        try:
            apply(builder, kind, args)
        except LinkdynError as exc:
            _readable(exc)
    try:
        model = builder.build()
        linkdyn.consistent_state(model)
    except LinkdynError as exc:
        _readable(exc)


vectors = st.one_of(st.tuples(numbers, numbers, numbers), st.lists(numbers, max_size=4),
                   st.lists(st.lists(numbers, max_size=3), max_size=3), numbers)
spatial_names = st.one_of(st.sampled_from(["A", "B", "O", "J", "K", "ground.O", "A.a",
                                           "B.b", "A.cm", "B.cm"]), names)
# Often valid, so that the sequences reach models that build and assemble.
masses = st.one_of(st.just(1.0), numbers)
inertias = st.one_of(st.sampled_from([(0.01, 0.02, 0.025), (1.0, 1.0, 1.0)]), vectors)
places = st.one_of(st.sampled_from([(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.0, 1.0)]),
                   vectors)


@FUZZ
@given(calls=st.lists(st.one_of(
    st.tuples(st.just("body"), st.sampled_from(["A", "B"]), st.just(1.0),
              st.sampled_from([(0.01, 0.02, 0.025), (1.0, 1.0, 1.0)]),
              st.sampled_from([(0.0, 0.0, 0.0), (0.0, 0.0, 1.0)]),
              st.sampled_from([(0.1, 0.0, 0.0), (0.0, 0.0, 0.5)])),
    st.tuples(st.just("ground"), st.just("O"), st.just((0.0, 0.0, 0.0))),
    st.tuples(st.sampled_from(["spherical", "revolute", "spring"]),
              st.sampled_from(["J", "K"]), *(2 * [st.sampled_from(["A.a", "B.b", "A.cm",
                                                                   "B.cm", "ground.O"])]),
              st.sampled_from([(0.0, 0.0, 1.0), 1.0, 100.0])),
    st.tuples(st.just("ground"), spatial_names, places),
    st.tuples(st.just("body"), spatial_names, masses, inertias, places, places),
    st.tuples(st.just("spherical"), spatial_names, spatial_names, spatial_names),
    st.tuples(st.sampled_from(["revolute", "cylindrical", "prismatic"]), spatial_names,
              spatial_names, spatial_names, places),
    st.tuples(st.just("universal"), spatial_names, spatial_names, spatial_names, places,
              places),
    st.tuples(st.just("angle_driver"), spatial_names, spatial_names, numbers),
    st.tuples(st.just("spring"), spatial_names, spatial_names, spatial_names, numbers),
    st.tuples(st.just("marker"), spatial_names, spatial_names),
), min_size=1, max_size=10))
def test_spatial_builder_calls_raise_only_documented_errors(calls):
    def apply(b, kind, args):
        if kind == "ground":
            b.add_ground_point(*args)
        elif kind == "body":
            name, mass, inertia, position, point = args
            b.add_body(name, mass=mass, inertia=inertia, position=position,
                       points={"a": point, "b": (0.0, 0.0, 0.1)})
        elif kind == "spherical":
            b.add_spherical(*args[:3])
        elif kind in ("revolute", "cylindrical", "prismatic", "universal"):
            getattr(b, f"add_{kind}")(*args)
        elif kind == "angle_driver":
            name, joint, rate = args
            b.add_angle_driver(name, joint, linkdyn.laws.linear(0.0, rate))
        elif kind == "spring":
            name, first, second, k = args
            b.add_spring_damper(name, first, second, stiffness=k)
        else:
            b.add_marker(*args)

    _replay(linkdyn.SpatialModelBuilder("fuzz", gravity=(0.0, 0.0, -9.81)), calls, apply)


# A sweep file: a list of cases (the grid form is tests/test_sweep.py's), one output of
# each kind but elements.
SWEEP_SEED = {"model": "jansen", "run": "simulate", "workers": 1,
              "run_options": {"t_end": 0.02, "rtol": 1e-6},
              "parameters": [{"bodies.L5.length": 0.61}, {"gravity": [0.0, -5.0]}],
              "outputs": [{"name": "x", "marker": "foot", "axis": "x"},
                          {"name": "phi", "quantity": "phi_norm", "reduce": "max"},
                          {"name": "rk", "stat": "rk_steps"}]}


@settings(max_examples=RUN_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_mutated_sweep_files_are_run_or_refused_by_the_command(tmp_path_factory, data):
    # A sweep file mutated and given to `linkdyn sweep` (serial): the command runs it (exit
    # 0, or 1 where cases failed, each with a documented error in the table) or refuses it
    # (exit 2) with a message; no traceback.
    import contextlib
    import io

    import pandas as pd

    from linkdyn.cli import main

    folder = tmp_path_factory.mktemp("sweep")
    path, table = folder / "s.json", folder / "t.csv"
    path.write_text(_mutated(SWEEP_SEED, data))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["sweep", str(path), "--executor", "serial", "--output", str(table)])
    assert code in (0, 1, 2) and "Traceback" not in err.getvalue(), err.getvalue()
    if code == 1:
        errors = pd.read_csv(table)["error_type"].dropna()
        assert all(getattr(linkdyn.errors, name, None) is not None for name in errors), errors


def test_the_fuzzers_reach_valid_models():
    """The mutations are not all rejected at the first field: an unmutated seed and a
    harmless mutation (a longer crank) load and assemble."""
    doc = _mutate(SEEDS["jansen"], ("name",), "replace", "mutant")
    model = compile_model(modelfile.loads(json.dumps(doc)))
    assert model.name == "mutant"
    assert math.isfinite(linkdyn.consistent_state(model).phi_norm)


@pytest.mark.slow
@pytest.mark.skipif("LINKDYN_FUZZ_EXAMPLES" not in os.environ,
                    reason="a longer hunt where LINKDYN_FUZZ_EXAMPLES asks for one")
def test_a_longer_hunt_finds_nothing():
    # The fuzz tests above with five times the examples, in a fresh interpreter.
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__)
    env = dict(os.environ, LINKDYN_FUZZ_EXAMPLES=str(5 * EXAMPLES))
    run = subprocess.run([sys.executable, "-m", "pytest", str(here), "-q", "-p",
                          "no:cacheprovider", "-m", "not slow"], capture_output=True,
                         text=True, env=env, cwd=here.parent, timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


_LAWS = ["cycloidal", "harmonic", "3-4-5", "4-5-6-7", "modified_trapezoid", "parabolic"]
_SEGMENTS = st.lists(st.one_of(
    st.tuples(st.sampled_from(["dwell", "rise", "return", "jump"]), numbers),
    st.tuples(st.sampled_from(["rise", "return"]), numbers, numbers, st.sampled_from(_LAWS)),
    st.just(("rise", math.pi, 0.01, "cycloidal")), st.just(("return", math.pi, 0.01, "3-4-5")),
    st.dictionaries(st.sampled_from(["motion", "angle", "lift", "law", "x"]), numbers,
                    max_size=4)), max_size=5)
_GOOD_PROGRAM = [("rise", math.pi, 0.01, "cycloidal"), ("return", math.pi, 0.01, "3-4-5")]
_PROFILES = st.one_of(st.none(), st.lists(st.tuples(numbers, numbers), max_size=12),
                      st.just([(0.03 * math.cos(a), 0.03 * math.sin(a))
                               for a in [0.3 * k for k in range(20)]]))


@FUZZ
@given(motion=st.one_of(st.none(), st.just(_GOOD_PROGRAM), _SEGMENTS), profile=_PROFILES,
       shape=st.sampled_from(["knife", "roller", "flat", "disc", None]),
       radius=st.one_of(st.just(0.008), st.just(0.0), numbers), phase=numbers,
       guide=st.sampled_from(["guide", "pin", "shaft", "nowhere"]),
       contact=st.one_of(st.none(), st.just({"stiffness": 1e8, "damping": 10.0}),
                         st.dictionaries(st.sampled_from(["stiffness", "model", "x"]), numbers,
                                         max_size=2)))
def test_cam_follower_calls_raise_only_documented_errors(motion, profile, shape, radius,
                                                        phase, guide, contact):
    """Whatever a cam is given, it builds and runs, or says what is wrong (no other
    exception, no crash): translating and oscillating guides both exist."""
    import warnings

    b = ModelBuilder("cam", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("G", (0.0, 0.1))
    b.add_ground_point("P", (0.06, 0.03))
    b.add_body("cam", mass=1.0, inertia=1e-3, points={"c": (0.0, 0.0)})
    b.add_body("follower", mass=0.2, inertia=1e-4, position=(0.0, 0.04))
    b.add_body("arm", mass=0.2, inertia=1e-4, points={"t": (0.0, 0.0), "p": (0.06, -0.01)},
               position=(0.0, 0.04))
    b.add_revolute("shaft", "ground.O", "cam.c")
    b.add_prismatic("guide", "ground.G", "follower.cm", axis=math.pi / 2)
    b.add_revolute("pin", "ground.P", "arm.p")
    b.add_angle_driver("spin", "shaft", {"law": "linear", "value": 0.0, "rate": 5.0})
    follower = "arm.t" if guide == "pin" else "follower.cm"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            b.add_cam_follower("c", "cam.c", follower, guide=guide, motion=motion,
                               profile=profile, shape=shape, radius=radius, phase=phase,
                               contact=contact)
        except LinkdynError as exc:
            _readable(exc)
            return
        try:
            model = b.build()
            linkdyn.simulate(model, 0.02, max_steps=20000)
        except LinkdynError as exc:
            _readable(exc)
