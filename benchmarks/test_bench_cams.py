"""Cams: the built-in ``valve_train`` (a flat tappet held on its cam by the valve spring,
the camshaft at a constant 400 rad/s, 81 % of its jump speed) over 1,000 cam turns at the
default tolerances, against the same machine with the exact (form-closed) pair, in one
run. The force-closed contact is stiff (its contact frequency is about 7,400 rad/s), so
it also runs with ``method="bdf"``; the steps, rows and method counters of each run are in
``extra_info``. One row per 10 degrees of cam angle."""

import json
import math
from importlib import resources

import pytest

import linkdyn
from linkdyn.model import compile_model

W = 400.0
TURNS = 1000
T_END = TURNS * 2 * math.pi / W


def machine(force_closed: bool):
    text = resources.files("linkdyn.models").joinpath("valve_train.json")
    data = json.loads(text.read_text(encoding="utf-8"))
    if not force_closed:
        data["cams"][0].pop("contact")
    return compile_model(linkdyn.modelfile.from_dict(data))


@pytest.mark.parametrize("force_closed, method", [(False, "auto"), (True, "auto"),
                                                  (True, "bdf")],
                         ids=["exact-pair", "force-closed", "force-closed-bdf"])
def test_valve_train_1000_turns(benchmark, force_closed, method):
    model = machine(force_closed)
    benchmark.group = "valve train 400 rad/s, 1000 cam turns"
    benchmark.extra_info["role"] = "force-closed" if force_closed else "baseline"
    result = benchmark.pedantic(linkdyn.simulate, args=(model, T_END),
                                kwargs=dict(dt_out=T_END / (36 * TURNS), method=method),
                                rounds=1, iterations=1)
    assert result.status == "success"
    assert not [e for e in result.events if e.direction < 0]      # it never lifts off
    benchmark.extra_info.update(steps=result.stats["steps"],
                                rk_steps=result.stats["rk_steps"],
                                bdf_steps=result.stats["bdf_steps"],
                                integration_seconds=result.stats["integration_seconds"])
