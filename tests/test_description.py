"""The builder rejects every kind of bad input with a ModelError naming the entry."""

import math

import pytest

import linkdyn
from linkdyn import ModelBuilder, ModelError


def base():
    b = ModelBuilder("m")
    b.add_ground_point("O", (0, 0))
    b.add_bar("rod", length=1.0, density=1.0)
    return b


@pytest.mark.parametrize("kwargs, message", [
    (dict(length=0.0, density=1.0), "length must be positive"),
    (dict(length=-1.0, density=1.0), "length must be positive"),
    (dict(length=math.nan, density=1.0), "length must be finite"),
    (dict(length=math.inf, density=1.0), "length must be finite"),
    (dict(length="1", density=1.0), "length must be a real number"),
    (dict(length=True, density=1.0), "length must be a real number"),
    (dict(length=1.0, density=0.0), "density must be positive"),
    (dict(length=1.0, mass=-2.0), "mass must be positive"),
    (dict(length=1.0, mass=1.0, inertia=0.0), "inertia must be positive"),
    (dict(length=1.0), "exactly one of density"),
    (dict(length=1.0, density=1.0, mass=1.0), "exactly one of density"),
    (dict(length=1.0, density=1.0, u=(0, 0)), "u must be a non-zero vector"),
    (dict(length=1.0, density=1.0, u=(1, 0), angle=0.3), "angle or as u"),
    (dict(length=1.0, density=1.0, omega=1.0, ud=(0, 1)), "omega or as ud"),
    (dict(length=1.0, density=1.0, position=(1, 2, 3)), "pair of numbers"),
    (dict(length=1.0, density=1.0, position="ab"), "pair of numbers"),
    (dict(length=1.0, density=1.0, velocity=(0, math.nan)), "velocity must be finite"),
    (dict(length=1.0, density=1.0, hold=1), "hold must be true or false"),
    (dict(length=1.0, density=1.0, points={"a": (0, 0)}), "point name 'a' is reserved"),
    (dict(length=1.0, density=1.0, points={"p.q": (0, 0)}), "without '.'"),
    (dict(length=1.0, density=1.0, points=[(0, 0)]), "points must be a mapping"),
])
def test_bad_bar(kwargs, message):
    b = ModelBuilder("m")
    with pytest.raises(ModelError, match=message) as info:
        b.add_bar("rod7", **kwargs)
    assert "rod7" in str(info.value)
    assert info.value.entry == "rod7"


@pytest.mark.parametrize("kwargs, message", [
    (dict(mass=0.0, inertia=1.0), "mass must be positive"),
    (dict(mass=1.0, inertia=-1.0), "inertia must be positive"),
    (dict(mass=1.0, inertia=math.nan), "inertia must be finite"),
    (dict(mass=None, inertia=1.0), "mass must be a real number"),
    (dict(mass=1.0, inertia=1.0, points={"cm": (1, 0)}), "reserved"),
    (dict(mass=1.0, inertia=1.0, points={"p": (1, math.inf)}), "point 'p' must be finite"),
])
def test_bad_body(kwargs, message):
    with pytest.raises(ModelError, match=message) as info:
        ModelBuilder("m").add_body("plate", **kwargs)
    assert info.value.entry == "plate"


def test_missing_keyword_is_a_type_error():
    with pytest.raises(TypeError):
        ModelBuilder("m").add_body("plate", mass=1.0)
    with pytest.raises(TypeError):
        ModelBuilder("m").add_bar("rod", length=1.0, density=1.0, colour="red")


@pytest.mark.parametrize("name, message", [
    ("rod", "already used by a body"),
    ("ground", "reserved"),
    ("a.b", "may not contain '.'"),
    ("", "non-empty string"),
    (" x", "non-empty string"),
    (3, "non-empty string"),
])
def test_bad_names(name, message):
    b = base()
    with pytest.raises(ModelError, match=message):
        b.add_bar(name, length=1.0, density=1.0)


def test_duplicate_names_across_kinds():
    b = base()
    b.add_revolute("pin", "rod.a", "ground.O")
    with pytest.raises(ModelError, match="'pin': the name is already used by a joint"):
        b.add_marker("pin", "rod.b")
    with pytest.raises(ModelError, match="already used by a body"):
        b.add_revolute("rod", "rod.b", "ground.O")
    with pytest.raises(ModelError, match="already used by a ground point"):
        b.add_ground_point("O", (1, 1))


@pytest.mark.parametrize("first, second, message", [
    ("rod.a", "ground.Q", "unknown ground point 'Q'"),
    ("bar.a", "ground.O", "unknown body 'bar'"),
    ("rod.z", "ground.O", "body 'rod' has no point 'z'"),
    ("rod", "ground.O", "must be 'body.point'"),
    ("rod.a.b", "ground.O", "must be 'body.point'"),
    (("rod",), "ground.O", "must be 'body.point' or \\(body, point\\)"),
    ("rod.a", "rod.b", "connects body 'rod' to itself"),
    ("ground.O", "ground.O", "connects the ground to itself"),
])
def test_bad_joints(first, second, message):
    b = base()
    with pytest.raises(ModelError, match=message) as info:
        b.add_revolute("J9", first, second)
    assert "J9" in str(info.value)


def test_bad_markers():
    b = base()
    with pytest.raises(ModelError, match="markers sit on bodies"):
        b.add_marker("m1", "ground.O")
    with pytest.raises(ModelError, match="has no point 'q'"):
        b.add_marker("m1", "rod.q")


def test_bad_model_level_input():
    with pytest.raises(ModelError, match="gravity must be a pair"):
        ModelBuilder("m", gravity=9.81)
    with pytest.raises(ModelError, match="model name"):
        ModelBuilder("")
    with pytest.raises(ModelError, match="no bodies"):
        ModelBuilder("empty").build()
    with pytest.raises(ModelError, match="position must be finite"):
        ModelBuilder("m").add_ground_point("O", (0, math.nan))


def test_angle_and_omega_become_u_and_ud():
    b = ModelBuilder("m")
    b.add_bar("rod", length=1.0, density=1.0, angle=math.pi / 2, omega=2.0)
    spec = b.description().bodies[0]
    assert spec.u == pytest.approx((0.0, 1.0), abs=1e-16)
    # ud = omega * perp(u) = 2 * (-1, 0)
    assert spec.ud == pytest.approx((-2.0, 0.0), abs=1e-15)


def test_bar_properties_and_points():
    b = ModelBuilder("m")
    b.add_bar("rod", length=0.6, density=2.0, points={"p": (0.1, 0.2)})
    spec = b.description().bodies[0]
    assert spec.resolved_mass() == pytest.approx(1.2)
    assert spec.resolved_inertia() == pytest.approx(1.2 * 0.36 / 12)
    assert spec.local_points() == {"cm": (0.0, 0.0), "a": (-0.3, 0.0), "b": (0.3, 0.0),
                                   "p": (0.1, 0.2)}


def test_description_is_immutable_and_model_counts(fourbar):
    desc = fourbar.description
    with pytest.raises(AttributeError):
        desc.name = "other"
    assert fourbar.nq == 12 and fourbar.nc == 3 + 8
    assert fourbar.constraint_names[:3] == ("crank.unit", "coupler.unit", "rocker.unit")
    assert fourbar.constraint_names[3:5] == ("O_crank.x", "O_crank.y")
    assert fourbar.coordinate_names[4:8] == ("coupler.x", "coupler.y", "coupler.ux",
                                             "coupler.uy")
    np_mass = list(fourbar.mass[4:8])
    assert np_mass == [0.7, 0.7, 0.008, 0.008]
    assert isinstance(fourbar, linkdyn.Model)


def test_endless_iterables_are_not_materialised():
    """A position given as an endless iterator is refused at once (only three items are
    taken), not turned into a list until memory runs out."""
    import itertools

    b = ModelBuilder("y")
    with pytest.raises(ModelError, match="got more than 2 values"):
        b.add_ground_point("O", itertools.count())
    with pytest.raises(ModelError, match="got 1 value$"):
        b.add_ground_point("O", iter([1.0]))
    b.add_ground_point("O", iter([1.0, 2.0]))   # an iterator of two is a pair


def test_a_body_nothing_holds_or_acts_on_is_warned_of_by_name():
    """A bar with no joint, driver, force element or contact falls freely: valid, but more
    often a forgotten joint. The build warns, naming it; a body held by a contact alone (the
    block on the incline) or a spatial platform held by drivers alone is not named."""
    import warnings

    b = ModelBuilder("loose")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("crank", length=1.0, density=1.0, position=(0.5, 0.0), angle=0.0)
    b.add_bar("forgotten", length=1.0, density=1.0, position=(3.0, 0.0), angle=0.0)
    b.add_revolute("pivot", "crank.a", "ground.O")
    with pytest.warns(linkdyn.ModelWarning, match=r"body forgotten has no joint") as caught:
        b.build()
    assert "crank" not in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linkdyn.ModelWarning)
        for name in ("block_on_incline", "five_ss_dynamic", "jansen", "walker_gait1"):
            linkdyn.load_model(name)


def test_compiling_leaves_the_garbage_collector_as_it_was(monkeypatch):
    """compile_model pauses the cyclic collector (linkdyn.compile.compiler) and gives it
    back as it found it: running, stopped, or after a compilation that failed."""
    import gc

    from linkdyn.compile import compiler

    assert gc.isenabled()
    linkdyn.chain(3)
    assert gc.isenabled()
    gc.disable()
    try:
        linkdyn.chain(3)
        assert not gc.isenabled()
    finally:
        gc.enable()
    description = linkdyn.chain(2).description

    def broken(desc):
        assert not gc.isenabled()       # paused while compiling
        raise linkdyn.ModelError("a stand-in failure")

    monkeypatch.setattr(compiler, "number_bodies", broken)
    with pytest.raises(linkdyn.ModelError, match="stand-in"):
        compiler.compile_model(description)
    assert gc.isenabled()
