"""Throughput of a 200-case Jansen sweep (crank speed and one link length varied, 2 s each
at rtol = atol = 1e-8): serial against a local process pool and a Dask LocalCluster on this
machine's cores, in the same run. Reports each executor's efficiency (serial time / (workers
x its time)) and its overhead per case (its time x workers / cases, minus the mean serial
case time)."""

import os

import numpy as np
import pytest

import linkdyn

WORKERS = os.cpu_count() or 1
OPTIONS = {"t_end": 2.0, "rtol": 1e-8, "atol": 1e-8, "dt_out": 0.01}


def cases():
    out = []
    for omega in np.linspace(-4.0, -8.0, 20):
        for length in np.linspace(0.600, 0.625, 10):
            # The crank is held: its centre (0.075 m from the pivot) moves with it.
            out.append({"bodies.L1.omega": float(omega),
                        "bodies.L1.velocity": [0.0, 0.075 * float(omega)],
                        "bodies.L5.length": float(length)})
    return out


def outputs(result):
    return {"foot_min_y": float(result.marker("P3")[:, 1].min())}


@pytest.mark.parametrize("executor", ["serial", "process", "dask"])
def test_sweep_throughput(benchmark, executor):
    if executor == "dask":
        pytest.importorskip("dask.distributed")
    benchmark.group = "jansen sweep, 200 cases of 2 s at 1e-8"
    benchmark.extra_info["role"] = "baseline" if executor == "serial" else executor
    table = benchmark.pedantic(linkdyn.sweep, args=("jansen", cases()),
                               kwargs=dict(run_options=OPTIONS, outputs=outputs,
                                           executor=executor, workers=WORKERS,
                                           progress=False),
                               rounds=1, iterations=1)
    assert (table["status"] == "ok").all()
    benchmark.extra_info.update(workers=1 if executor == "serial" else WORKERS,
                                case_seconds_mean=float(table["seconds"].mean()))
