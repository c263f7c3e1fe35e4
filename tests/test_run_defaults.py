"""A model's own run settings (linkdyn.elements.run_defaults): validation, the model-file
form of planar, spatial and linkage files, the built-ins that need them, and the command's
use of them (its options override them)."""

import json
import math

import pytest

import linkdyn
from linkdyn.cli import main
from linkdyn.describe import modelfile
from linkdyn.elements.run_defaults import checked_run_defaults
from linkdyn.errors import ModelError, ModelFileError


@pytest.mark.parametrize("settings, message", [
    ({"t_end": 0.0}, "t_end must be a positive finite number"),
    ({"t_end": -1.0}, "t_end must be a positive finite number"),
    ({"t_end": math.inf}, "t_end must be a positive finite number"),
    ({"t_end": math.nan}, "t_end must be a positive finite number"),
    ({"t_end": True}, "t_end must be a positive finite number"),
    ({"t_end": "1"}, "t_end must be a positive finite number"),
    ({"redundant": "yes"}, "redundant must be 'raise' or 'allow'"),
    ({"at_limit": "bounce"}, "at_limit must be 'raise' or 'reverse'"),
    ({"horizon": 1.0}, "unknown run default 'horizon'"),
])
def test_bad_settings_are_refused_by_name(settings, message):
    with pytest.raises(ModelError, match=message) as info:
        checked_run_defaults("model 'm'", settings)
    assert "model 'm'" in str(info.value)


def test_settings_are_kept_sorted_and_as_floats():
    assert checked_run_defaults("m", {"t_end": 2, "redundant": "allow"}) == (
        ("redundant", "allow"), ("t_end", 2.0))
    assert checked_run_defaults("m", None) == ()


def test_planar_and_spatial_model_files_carry_them(tmp_path):
    b = linkdyn.ModelBuilder("pendulum")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("bar", length=1.0, density=1.0, position=(0.5, 0.0), angle=0.0)
    b.add_revolute("pin", "bar.a", "ground.O")
    b.set_run_defaults(t_end=0.5)
    model = b.build()
    assert dict(model.run_defaults) == {"t_end": 0.5}
    path = tmp_path / "pendulum.json"
    modelfile.save(model.description, path)
    assert json.loads(path.read_text())["run_defaults"] == {"t_end": 0.5}
    again = linkdyn.load_model(path)
    assert again.description == model.description
    assert dict(again.run_defaults) == {"t_end": 0.5}

    spatial = linkdyn.load_model("bricard")
    assert dict(spatial.run_defaults) == {"redundant": "allow"}
    path = tmp_path / "bricard.json"
    spatial.save(path)
    assert json.loads(path.read_text())["run_defaults"] == {"redundant": "allow"}
    assert linkdyn.load_model(path).description == spatial.description
    # the same linkage without its redundant row needs no such setting
    assert dict(linkdyn.models.spatial.bricard(redundant_free=True).run_defaults) == {}


@pytest.mark.parametrize("value, message", [
    ([1.0], "expected an object"),
    ({"t_end": -2}, "t_end must be a positive"),
    ({"speed": 2}, "unknown run default"),
])
def test_a_bad_run_defaults_entry_in_a_file_names_the_entry(tmp_path, value, message):
    data = modelfile.to_dict(linkdyn.load_model("jansen").description)
    data["run_defaults"] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=message) as info:
        linkdyn.load_model(path)
    assert info.value.field == "run_defaults"


def test_a_linkage_file_carries_them(tmp_path):
    linkage = linkdyn.models.linkages.linkage("spherical_watt1")
    assert dict(linkage.run_defaults) == {"at_limit": "reverse"}
    path = tmp_path / "watt.json"
    linkage.save(path)
    again = linkdyn.load_model(path)
    assert again.description == linkage
    assert dict(again.run_defaults) == {"at_limit": "reverse"}


def test_the_builtins_that_need_them():
    assert dict(linkdyn.load_model("iftomm_a03").run_defaults) == {"t_end": 0.03}
    assert dict(linkdyn.load_model("spherical_watt1").run_defaults) == {"at_limit": "reverse"}
    assert dict(linkdyn.load_model("jansen").run_defaults) == {}


def test_the_command_uses_them_and_its_options_override_them(capsys):
    assert main(["simulate", "iftomm_a03"]) == 0
    out = capsys.readouterr().out
    assert "t = 0 .. 0.03 s" in out and "run defaults: --t-end 0.03" in out
    assert main(["simulate", "iftomm_a03", "--t-end", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "t = 0 .. 0.01 s" in out and "run defaults" not in out
    # the API takes what it is given: the redundant row is refused unless allowed
    with pytest.raises(linkdyn.errors.RedundantConstraintsError):
        linkdyn.consistent_state(linkdyn.load_model("bricard"))
    assert main(["kinematics", "spherical_watt1", "--at-limit", "raise"]) == 2
    assert "limit position" in capsys.readouterr().err
