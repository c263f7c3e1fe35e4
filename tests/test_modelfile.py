"""Model files: round trips, and a clear error for every malformed field."""

import copy
import json

import pytest

import linkdyn
from linkdyn import ModelFileError, modelfile
from conftest import fourbar_builder


def test_save_and_load_give_an_equal_model(tmp_path, fourbar, jansen):
    for model in (fourbar, jansen, linkdyn.chain(5)):
        path = tmp_path / f"{model.name}.json"
        model.save(path)
        loaded = linkdyn.load_model(path)
        assert loaded == model
        assert loaded.description == model.description
        assert (loaded.q0 == model.q0).all() and (loaded.mass == model.mass).all()


def test_saved_file_is_canonical(tmp_path, fourbar):
    path = tmp_path / "m.json"
    fourbar.save(path)
    data = json.loads(path.read_text())
    assert data["linkdyn_model"] == 1
    crank = data["bodies"][0]
    assert crank["type"] == "bar" and crank["hold"] is True and "angle" not in crank
    assert data["joints"][1] == {"type": "revolute", "name": "A", "first": "crank.b",
                                 "second": "coupler.A"}
    # Saving again what was loaded gives the same text.
    assert modelfile.dumps(linkdyn.load_model(path).description) == path.read_text()


def test_builtin_jansen_is_listed(jansen):
    assert "jansen" in linkdyn.builtin_names()
    assert jansen.marker_names == ("P3", "foot")


def _fourbar_dict():
    return modelfile.to_dict(fourbar_builder().description())


def _mutated(fn):
    d = copy.deepcopy(_fourbar_dict())
    fn(d)
    return d


@pytest.mark.parametrize("mutate, field, message", [
    (lambda d: d["bodies"][1].pop("mass"), "bodies[1]", "missing required field\\(s\\): mass"),
    (lambda d: d["bodies"][0].update(colour="red"), "bodies[0]", "unknown field\\(s\\): colour"),
    (lambda d: d["bodies"][0].update(length="long"), "bodies[0]", "length must be a real"),
    (lambda d: d["bodies"][2].update(length=-0.3), "bodies[2]", "length must be positive"),
    (lambda d: d["bodies"][0].update(type="beam"), "bodies[0]", "'type' must be one of"),
    (lambda d: d["bodies"][0].update(position=[1]), "bodies[0]", "pair of numbers"),
    (lambda d: d["joints"][0].update(second="ground.X"), "joints[0]", "unknown ground point"),
    (lambda d: d["joints"][0].pop("first"), "joints[0]", "missing required field"),
    (lambda d: d["joints"][2].update(first="rocker.b"), "joints[2]", "to itself"),
    (lambda d: d["joints"].append(d["joints"][0]), "joints[4]", "already used by a joint"),
    (lambda d: d["markers"][0].update(point="coupler.Z"), "markers[0]", "no point 'Z'"),
    (lambda d: d.update(linkdyn_model=7), "linkdyn_model", "unsupported format version"),
    (lambda d: d.pop("bodies"), "top level", "missing required field"),
    (lambda d: d.update(extra=1), "top level", "unknown field"),
    (lambda d: d.update(bodies={}), "bodies", "expected a list"),
    (lambda d: d["bodies"].__setitem__(0, 5), "bodies[0]", "expected an object"),
    (lambda d: d.update(ground=[1, 2]), "ground", "expected an object"),
    (lambda d: d.update(gravity="down"), "gravity", "gravity must be a pair"),
    (lambda d: d["bodies"][0].update(hold="yes"), "bodies[0]", "hold must be true or false"),
])
def test_bad_fields_are_named(tmp_path, mutate, field, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_mutated(mutate)))
    with pytest.raises(ModelFileError, match=message) as info:
        linkdyn.load_model(path)
    assert info.value.field == field
    assert info.value.path == str(path)
    assert str(path) in str(info.value)


def test_invalid_json_and_missing_files(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"linkdyn_model": 1,\n "name": }')
    with pytest.raises(ModelFileError, match="not valid JSON: .* line 2"):
        linkdyn.load_model(path)
    with pytest.raises(ModelFileError, match="no such file"):
        linkdyn.load_model(tmp_path / "missing.json")
    with pytest.raises(ModelFileError, match="not a built-in model"):
        linkdyn.load_model("jansenn")
    assert issubclass(ModelFileError, ValueError)


def test_documented_example_file_loads(tmp_path):
    # The model file shown in the model-file tutorial is valid and assembles.
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "docs" / "tutorials" / "model_files.md").read_text()
    example = re.search(r"```json\n(.*?)```", readme, re.S).group(1)
    path = tmp_path / "example.json"
    path.write_text(example)
    model = linkdyn.load_model(path)
    assert model.body_names == ("rod", "bob")
    state = linkdyn.consistent_state(model)
    assert state.phi_norm <= 1e-13


@pytest.mark.parametrize("text, match", [
    ('{"linkdyn_model": 1, "name": "x", "bodies": ' + "[" * 100000 + "]" * 100000 + "}",
     "nested too deeply"),
    ('{"linkdyn_model": 1, "name": "x", "bodies": [{"type": "bar", "name": "b", "length": 1'
     + "0" * 400 + ', "density": 1}]}', "too large"),
    ('{"linkdyn_model": 1, "name": "x", "bodies": [{"type": ["bar"], "name": "b"}]}',
     "field 'type' must be one of"),
    ('{"linkdyn_model": 1, "name": "x", "bodies": [{"type": "bar", "name": "b", "length": 1,'
     ' "density": 1}], "joints": [], "drivers": [{"type": "angle", "name": "d", "joint": {},'
     ' "law": {"law": "constant", "value": 0}}]}', "unknown joint"),
    ('{"linkdyn_model": 1, "name": "x", "bodies": [{"type": "bar", "name": "b", "length": 1,'
     ' "density": 1}], "joints": [{"type": "revolute", "name": "J", "first": "b.a",'
     ' "second": "ground.O"}]}', "unknown ground point"),
])
def test_hostile_model_files_raise_model_file_errors(text, match):
    with pytest.raises(linkdyn.ModelFileError, match=match):
        linkdyn.modelfile.loads(text)


def test_non_utf8_and_huge_integer_files(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "\xe9"}')
    with pytest.raises(linkdyn.ModelFileError, match="UTF-8"):
        linkdyn.load_model(path)
    with pytest.raises(linkdyn.ModelFileError, match="not a model file"):
        linkdyn.modelfile.loads('{"x": ' + "9" * 5000 + "}")


@pytest.mark.parametrize("call, match", [
    (lambda b: b.add_bar("b", length=1e200, density=1.0), "out of the range"),
    (lambda b: b.add_bar("b", length=1e-320, density=1.0), "out of the range"),
    (lambda b: b.add_body("b", mass=1e-320, inertia=1.0), "too small"),
    (lambda b: b.add_bar("b", length=10**400, density=1.0), "too large"),
    (lambda b: b.add_angle_driver("d", ["J1"], linkdyn.laws.constant(0.0)), "unknown joint"),
    (lambda b: linkdyn.laws.constant(10**400), "too large"),
    (lambda b: linkdyn.laws.law_from_dict({"law": ["linear"]}), "law must be"),
])
def test_hostile_builder_values_raise_model_errors(call, match):
    b = linkdyn.ModelBuilder("hostile")
    with pytest.raises(linkdyn.ModelError, match=match):
        call(b)


def test_saved_files_have_no_negative_zero(tmp_path):
    b = linkdyn.ModelBuilder("signs")
    b.add_ground_point("O", (-0.0, 0.0))
    b.add_bar("rod", length=1.0, density=1.0, position=(0.5, -0.0), angle=-0.0)
    b.add_revolute("pin", "ground.O", "rod.a")
    path = tmp_path / "m.json"
    b.build().save(path)
    assert "-0.0" not in path.read_text()
    assert linkdyn.load_model(path) == b.build()


def test_huge_velocity_guesses_raise_an_assembly_error():
    b = linkdyn.ModelBuilder("fast")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, density=1.0, position=(0.5, 0.0), ud=(1e308, 1e308))
    b.add_revolute("pin", "ground.O", "rod.a")
    with pytest.raises(linkdyn.AssemblyError, match="not finite.*'rod'"):
        linkdyn.consistent_state(b.build())


def test_a_file_without_bodies_names_the_file(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text('{"linkdyn_model": 1, "name": "x", "bodies": []}')
    with pytest.raises(ModelFileError, match=r"empty\.json: bodies the model has no bodies"):
        modelfile.load(path)


@pytest.mark.parametrize("load", ["load_model", "modelfile.load", "load_sweep_file"])
def test_loading_from_a_path_that_is_not_a_file_name_is_refused(load):
    """An int would be opened as a file descriptor (the sweep file's reader read and closed
    descriptor 3); the others leaked os.fspath's TypeError."""
    from linkdyn.batch.sweep import load_sweep_file
    from linkdyn.describe import modelfile

    call = {"load_model": linkdyn.load_model, "modelfile.load": modelfile.load,
            "load_sweep_file": load_sweep_file}[load]
    with pytest.raises(linkdyn.ArgumentTypeError, match="path must be a file name"):
        call(3)
