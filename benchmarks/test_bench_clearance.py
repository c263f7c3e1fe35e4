"""Joints with clearance: the built-in ``clearance_slider_crank`` (Flores and co-workers'
slider-crank at 5000 rpm, a 0.5 mm radial clearance in the wrist pin) over four crank turns
at rtol 1e-9, against the same machine with an ideal wrist pin, in one run. The ratio of
the two wall times, and of their steps, is the price of the impacts (each onset and
separation located as an event); both are reported in ``extra_info``."""

import json
import math
from importlib import resources

import pytest

import linkdyn
from linkdyn.compile.compiler import compile_model

W = 5000 * 2 * math.pi / 60
T_END = 4 * 2 * math.pi / W


def machine(clearance: bool):
    text = resources.files("linkdyn.models").joinpath("clearance_slider_crank.json")
    data = json.loads(text.read_text(encoding="utf-8"))
    if not clearance:
        for joint in data["joints"]:
            joint.pop("clearance", None)
    return compile_model(linkdyn.modelfile.from_dict(data))


@pytest.mark.parametrize("clearance", [False, True], ids=["ideal", "clearance"])
def test_slider_crank_with_clearance(benchmark, clearance):
    model = machine(clearance)
    benchmark.group = "slider-crank 5000 rpm, 4 turns, rtol 1e-9"
    benchmark.extra_info["role"] = "clearance" if clearance else "baseline"
    result = benchmark.pedantic(linkdyn.simulate, args=(model, T_END),
                                kwargs=dict(rtol=1e-9, dt_out=T_END / 400),
                                rounds=3, iterations=1)
    assert result.status == "success"
    benchmark.extra_info.update(steps=result.stats["steps"], events=len(result.events),
                                integration_seconds=result.stats["integration_seconds"])
