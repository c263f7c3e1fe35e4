"""Models in from other formats (issue 53): the time to read and compile a robot written by
others (pybullet's minitaur URDF, 24 bodies from 31 links; its KUKA iiwa URDF and
SDFormat; gymnasium's MJCF humanoid), against the target of 50 ms for a 30-link robot;
and the imported four-bar's integration against the same four-bar built in Python (same
compiled arrays: the ratio should be 1 within noise).

Run:  python -m pytest benchmarks/test_bench_exchange.py -s
"""

import os
import warnings

import pytest

import linkdyn
import linkdyn.exchange


def _path(kind, name):
    if kind == "pybullet":
        data = pytest.importorskip("pybullet_data")
        return os.path.join(data.getDataPath(), name)
    gym = pytest.importorskip("gymnasium")
    return os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets", name)


FILES = {"minitaur.urdf": ("pybullet", "quadruped/minitaur.urdf"),
         "iiwa.urdf": ("pybullet", "kuka_iiwa/model.urdf"),
         "iiwa.sdf": ("pybullet", "kuka_iiwa/model.sdf"),
         "humanoid.xml": ("gymnasium", "humanoid.xml")}


@pytest.mark.parametrize("name", sorted(FILES))
def test_read_and_compile(benchmark, name):
    path = _path(*FILES[name])

    def load():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", linkdyn.ModelWarning)
            return linkdyn.load_model(path)

    model = benchmark(load)
    benchmark.extra_info["bodies"] = len(model.body_names)


def test_imported_four_bar_integrates_as_fast_as_its_description(benchmark):
    """The URDF four-bar and the model rebuilt from its own description (the same
    compiled arrays), each 2 s at rtol 1e-10 with redundant rows allowed: the ratio of
    their integration times (best of five)."""
    urdf = linkdyn.load_model(linkdyn.exchange.example("fourbar_loop.urdf"),
                              gravity=(0.0, -9.81, 0.0))
    from linkdyn.compile.compiler import compile_model

    rebuilt = compile_model(urdf.description)

    def best(model):
        return min(linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, redundant="allow",
                                    t_out="final").stats["integration_seconds"]
                   for _ in range(5))

    benchmark(best, urdf)
    ratio = best(urdf) / best(rebuilt)
    benchmark.extra_info["ratio_to_rebuilt"] = ratio
    print(f"\nimported / rebuilt integration time: {ratio:.2f}")
