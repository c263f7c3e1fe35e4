"""Built-in models: model files shipped inside the package, models derived from them, and
parametric generators.

``load_model("jansen")`` loads a built-in by name; any other argument is read as a path to a
model file. ``jansen_driven`` is the Jansen linkage with its crank driven at -2 pi rad/s (the
dynamic benchmark's initial speed), for kinematic analysis. ``chain(n)`` generates a hanging
chain of ``n`` bars (a size-scalable test model). ``nfourbar(n)`` and ``simple_pendulum()`` are
problems A02 and A01 of the IFToMM multibody benchmarks (:mod:`linkdyn.models.iftomm`).
``stephenson2``, ``jansen_modified`` and ``crank_rocker`` (planar), ``spherical_rrpr``,
``spherical_watt1`` (spherical) and ``five_ss`` (spatial) are the point-line-plane paper's
linkages of points, lines and planes (:mod:`linkdyn.models.linkages`, built with
:mod:`linkdyn.geometric`), driven for kinematics.
``truss(panels)`` is a Warren truss swinging about its first node, a closed-loop model of any
size with a known motion (:mod:`linkdyn.models.warren`). Spatial models
(:mod:`linkdyn.models.spatial`): ``heavy_top``, the symmetric heavy top about a fixed
point; ``bricard``, IFToMM problem A04; ``flyball_governor``, IFToMM problem A05 (stiff:
simulate it with ``method="bdf"``); ``flexible_arm``, an arm with two series-elastic
joints on a turret; ``spatial_double_pendulum``; ``spatial_slider_crank``; and
``five_ss_dynamic``, the 5-SS platform with masses.
``clearance_slider_crank`` is Flores and co-workers' slider-crank at 5000 rpm with a
revolute joint with clearance between rod and slider (:mod:`linkdyn.elements.clearance`).
``valve_train`` is a direct-acting overhead-cam valve train whose spring holds the tappet
on the cam through a force-closed contact, so that it can jump (:mod:`linkdyn.elements.cams`).
``ten_body_linkage`` is the two-actuator mechanism of Nurye's kinematic analysis report
(2024), fully driven, for kinematics (its model file's notes say where its data come from
and how it compares with the report's Adams results).
"""

from __future__ import annotations

import math
import os
import re
from importlib import resources

from .._checks import checked_path
from ..compile.compiler import compile_model
from ..compile.model import Model, check_model_size
from ..describe import modelfile
from ..describe.builder import ModelBuilder
from ..describe.geometric import Linkage
from ..errors import ArgumentError, ArgumentTypeError, ModelError, ModelFileError

from .iftomm import andrews, nfourbar, simple_pendulum
from .linkages import LINKAGES, linkage
from .spatial import (bricard, five_ss_dynamic, flexible_arm, flyball_governor, heavy_top,
                      spatial_double_pendulum, spatial_slider_crank)
from .warren import truss

__all__ = ["builtin_names", "load_model", "as_model", "andrews", "chain", "heavy_top",
           "nfourbar", "simple_pendulum", "truss"]


def _file_names() -> list[str]:
    files = resources.files(__name__)
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".json"))


def _builtin_file(name: str) -> dict:
    import json

    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)


def _jansen_driven():
    data = _builtin_file("jansen")
    data["name"] = "jansen_driven"
    for body in data["bodies"]:
        body.pop("hold", None)
    # J1 pins L1.a (first) to P1 (second): the relative angle is -(crank angle), so a crank
    # turning at -2 pi rad/s is a relative angle growing at +2 pi rad/s.
    data["drivers"] = [{"type": "angle", "name": "crank", "joint": "J1",
                        "law": {"law": "linear", "value": 0.0, "rate": 2 * math.pi}}]
    return compile_model(modelfile.from_dict(data, path="<built-in jansen_driven>"))


_DERIVED = {"jansen_driven": _jansen_driven, "heavy_top": heavy_top, "bricard": bricard,
            "flexible_arm": flexible_arm, "spatial_double_pendulum": spatial_double_pendulum,
            "spatial_slider_crank": spatial_slider_crank, "five_ss_dynamic": five_ss_dynamic,
            "flyball_governor": flyball_governor,
            **{name: (lambda name=name: linkage(name).build()) for name in LINKAGES}}


#: The IFToMM benchmark problems loaded by their benchmark names (also built-ins by
#: function: simple_pendulum, andrews).
PROBLEMS = {"iftomm_a01": simple_pendulum, "iftomm_a03": andrews}
#: Generators loaded as ``NAME:N`` (N a positive whole number).
GENERATORS = {"chain": lambda n: chain(n), "nfourbar": lambda n: nfourbar(n),
              "truss": lambda n: truss(n)}


def builtin_names() -> list[str]:
    """Names of the built-in models (:func:`load_model` also takes the IFToMM problems'
    names in :data:`PROBLEMS` and the generators' ``chain:N``, ``nfourbar:N``,
    ``truss:N``)."""
    return sorted(_file_names() + list(_DERIVED))


def load_model(name_or_path, *, gravity=None, initial=None, floating_base=None,
               stops=None, controls=None) -> Model:
    """Load and compile a built-in model (by name, e.g. ``"jansen"``), an IFToMM problem
    (``"iftomm_a01"``, ``"iftomm_a03"``), a generated one (``"chain:20"``,
    ``"nfourbar:40"``, ``"truss:10"``) or a model file (path): linkdyn's own JSON, or a
    URDF file (``.urdf``, with its loop joints; :mod:`linkdyn.exchange.urdf`). The API and
    the ``linkdyn`` command resolve names here alone.

    ``gravity`` (x, y, z) and ``initial`` ({joint: angle or (angle, rate)}: the tree
    joints' positions and rates at the start) apply to URDF, SDFormat and MJCF files
    (gravity replaces the world's or ``<option>``'s; SDFormat's and MJCF's positions count
    from the file's pose, MJCF's as MuJoCo's qpos); ``floating_base`` (free the root link)
    to URDF files; ``stops`` (the contact law of the joints' limits as joint stops,
    :func:`linkdyn.exchange.urdf.load_urdf`) to URDF, SDFormat and MJCF files;
    ``controls`` ({actuator: number or law}, MuJoCo's ``ctrl``) to MJCF files
    (:mod:`linkdyn.exchange.mjcf_actuators`).

    Raises :class:`ModelFileError` for a name that is neither a built-in nor an existing
    file, and for a file that cannot be read or is invalid (a URDF file's errors name the
    line, the element and the attribute); ArgumentError for a generator whose N is not a
    positive whole number, and for URDF options given with another kind of model;
    ArgumentTypeError for what is neither a str nor an os.PathLike."""
    text = os.fspath(checked_path("load_model", name_or_path))
    if controls is not None and not text.lower().endswith(".xml"):
        raise ArgumentError(f"load_model: controls applies to MJCF files (their actuators), "
                            f"not to {text!r}")
    if text.lower().endswith(".urdf"):
        from ..exchange import load_urdf

        return load_urdf(text, gravity=gravity, initial=initial,
                         floating_base=False if floating_base is None else floating_base,
                         stops=stops)
    if stops is not None and not text.lower().endswith((".xml", ".sdf")):
        raise ArgumentError(f"load_model: stops applies to URDF, SDFormat and MJCF files, "
                            f"not to {text!r}")
    if text.lower().endswith(".sdf"):
        from ..exchange import load_sdf

        return load_sdf(text, gravity=gravity, initial=initial, floating_base=floating_base,
                        stops=stops)
    if text.lower().endswith(".xml"):
        from ..exchange import load_mjcf

        return load_mjcf(text, gravity=gravity, initial=initial, floating_base=floating_base,
                         stops=stops, controls=controls)
    given = [k for k, v in (("gravity", gravity), ("initial", initial),
                            ("floating_base", floating_base)) if v is not None]
    if given:
        raise ArgumentError(f"load_model: {', '.join(given)} apply to URDF, SDFormat and "
                            f"MJCF files, not to {text!r}")
    if text in _DERIVED:
        return _DERIVED[text]()
    if text in PROBLEMS:
        return PROBLEMS[text]()
    kind, colon, count = text.partition(":")
    if colon and kind in GENERATORS:
        if not re.fullmatch(r"[0-9]+", count) or int(count) < 1:
            raise ArgumentError(f"{text}: {kind}:N needs a positive whole number N, got "
                                f"{count!r}")
        return GENERATORS[kind](int(count))
    if text in _file_names():
        res = resources.files(__name__).joinpath(f"{text}.json")
        return _compile(modelfile.loads(res.read_text(encoding="utf-8"),
                                        path=f"<built-in {text}>"), f"<built-in {text}>")
    if not os.path.exists(text):
        raise ModelFileError(f"unknown model: not a built-in model (built-ins: "
                             f"{', '.join(builtin_names())}) and no such file", path=text)
    return _compile(modelfile.load(text), text)


def as_model(model) -> Model:
    """``model`` itself when it is a compiled :class:`Model`; a built-in model's name or a
    model file's path is loaded (:func:`load_model`). Anything else raises
    :class:`linkdyn.errors.ArgumentTypeError`. The solvers take a model through this."""
    if isinstance(model, Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        return load_model(model)
    raise ArgumentTypeError(f"model must be a linkdyn.Model, a built-in model's name or a "
                            f"model file's path, got {type(model).__name__}")


def _compile(loaded, path) -> Model:
    """A loaded description compiled: a Description, or a (spherical, spatial) Linkage."""
    if isinstance(loaded, Linkage):
        try:
            return loaded.build()
        except ModelError as exc:
            raise ModelFileError(str(exc), path, entry=exc.entry) from None
    return compile_model(loaded)


def chain(n_bars: int, length: float = 0.1, density: float = 1.0,
          angle: float = -math.pi / 4, joint_stiffness: float = 0.0,
          joint_damping: float = 0.0) -> Model:
    """A chain of ``n_bars`` equal bars hanging from the ground point ``O`` at the origin,
    pinned end to end, all at ``angle`` (rad) initially, at rest: n degrees of freedom.
    With ``joint_stiffness`` (N m/rad) or ``joint_damping`` (N m s/rad), every joint gets a
    torsional spring-damper ``S<i>``, at rest in the initial configuration.
    Markers: ``tip`` at the free end."""
    if isinstance(n_bars, bool) or not isinstance(n_bars, int) or n_bars < 1:
        raise ModelError(f"chain: n_bars must be a positive integer, got {n_bars!r}")
    check_model_size(n_bars, 8e3, "chain", "bars")   # 3.4 kB a bar measured while built
    b = ModelBuilder(f"chain{n_bars}")
    b.add_ground_point("O", (0.0, 0.0))
    ux, uy = math.cos(angle), math.sin(angle)
    for i in range(n_bars):
        s = (i + 0.5) * length
        b.add_bar(f"B{i}", length=length, density=density, position=(s * ux, s * uy),
                  u=(ux, uy))
        b.add_revolute(f"R{i}", f"B{i}.a", "ground.O" if i == 0 else f"B{i - 1}.b")
        if joint_stiffness or joint_damping:
            b.add_torsional_spring_damper(f"S{i}", f"R{i}", joint_stiffness, joint_damping)
    b.add_marker("tip", f"B{n_bars - 1}.b")
    return b.build()
