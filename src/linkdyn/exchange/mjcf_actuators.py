"""MJCF actuators in: ``<motor>``, ``<position>``, ``<velocity>`` and ``<general>`` on a
single hinge or slide, as linkdyn's motors, servos and joint dampers; and the joints'
``armature``, the reflected inertia of their rotors.

MuJoCo's actuator with transmission ``joint`` (or ``jointinparent``) and gear ``g`` (the
first of ``gear``'s six numbers) has the length ``l = g qpos`` and applies the joint force
``g F`` of its actuator force

    F = a u + b0 + b1 l + b2 l'

with ``u`` its control (``ctrl``, clamped to ``ctrlrange`` where the actuator is
ctrl-limited), ``a = gainprm[0]`` (gain type ``fixed``) and ``b0..b2 = biasprm[0..2]``
(bias type ``none`` or ``affine``). The shortcuts are ``<motor>`` (a = 1), ``<position
kp kv>`` (a = kp, b1 = -kp, b2 = -kv) and ``<velocity kv>`` (a = kv, b2 = -kv). On the
joint's coordinate s (qpos less its value at s = 0, ``s0``) that force is exactly

- ``b1 < 0``: a servo named after the actuator, ``kp (target - s)`` with ``kp = -b1 g^2``
  and ``target = -(a u + b0) / (b1 g) - s0`` (``<position>``: ``u / g - s0``);
- ``b1 = 0``: a motor named after the actuator, of torque or force ``g (a u + b0)``;
- ``b2 < 0``: besides, a joint damper ``"<actuator>/damping"`` of ``-b2 g^2``.

An actuator named like a joint or body of the file is ``"<name>/actuator"`` (linkdyn's
names are one namespace); an unnamed one is ``actuator_<i>``, ``i`` its place in
``<actuator>``. A linkdyn controller acting on the motor adds a joint torque (``g F``
units), on the servo replaces its target (in the joint's coordinate).

The control ``u`` is ``controls[name]`` (:func:`load_mjcf`; default 0, as MuJoCo's
``ctrl``): a number, clamped to a limited ``ctrlrange`` as MuJoCo clamps it, or a law of
time (:mod:`linkdyn.elements.laws`); a law on a ctrl-limited actuator must stay within the
range (a constant, a harmonic within it, a ``pchip`` table of values within it), since a
clamped law is no longer smooth. Not imported, and named in the file's ModelWarning:
actuators with activation dynamics (``dyntype`` other than ``none``, a position's
``timeconst``), a gain that is not ``fixed``, a position's ``dampratio`` (a damping from
the joint's inertia), a positive ``b1`` or ``b2`` (negative stiffness or damping), force limits
(``forcerange``; MuJoCo clamps F, which these elements do not), and transmissions other
than a single hinge's or slide's joint (tendons, sites, bodies, ball and free joints).

Armature. MuJoCo adds a joint's ``armature`` a to its diagonal of the joint-space mass
matrix: the kinetic energy ``a qpos'^2 / 2``, whatever the bodies do. A single hinge's is
a rotor body ``"<joint>/rotor"`` pinned to the ground (``"<joint>/rotor_pin"``, at the
joint's anchor and axis in the file's pose) and turned at the joint's own rate by a gear
pair ``"<joint>/armature"`` of teeth (1, 1) (module 2 m: a pitch radius of 1 m, so that its
tooth force is the rotor's torque in N m): the rotor's centre stays put, its spin is the
joint's rate, and its inertia a (about every axis) gives exactly that energy, with a
constant diagonal mass matrix. The rotor's mass, which only its pin holds, is a / (0.1
m)^2. A single slide's is a rotor of mass a on a ground slide ``"<joint>/rotor_slide"``
normal to gravity (which then does no work on it), moved at the joint's rate by a joint
coupling ``"<joint>/armature"`` of ratio 1 (its multiplier the rotor's force). Armature of
ball and combined joints is named as not imported.
"""

from __future__ import annotations

import math

import numpy as np

from ..elements import laws
from ..errors import ArgumentError, ArgumentTypeError

__all__ = ["actuator_extras", "armature_extras"]

#: MuJoCo's actuator elements this reader takes (see _coefficients for their laws).
SHORTCUTS = ("motor", "position", "velocity", "general")
#: Transmissions this reader does not take.
OTHER_TRANSMISSIONS = ("tendon", "site", "body", "cranksite")


def _coefficients(reader, node, a: dict) -> tuple | None:
    """(a, b0, b1, b2) of an actuator element, or None where it is not an affine law of its
    control (the caller names it as not read)."""
    tag = node.tag
    if tag == "motor":
        return 1.0, 0.0, 0.0, 0.0
    if tag == "position":
        if "dampratio" in a or float(reader.floats(node, a, "timeconst", 1, (0.0,))[0]) > 0:
            return None                 # a damping from the inertia; a filter's activation
        kp = float(reader.floats(node, a, "kp", 1, (1.0,))[0])
        kv = float(reader.floats(node, a, "kv", 1, (0.0,))[0])
        return kp, 0.0, -kp, -kv
    if tag == "velocity":
        kv = float(reader.floats(node, a, "kv", 1, (1.0,))[0])
        return kv, 0.0, 0.0, -kv
    if a.get("gaintype", "fixed") != "fixed":
        return None
    biastype = a.get("biastype", "none")
    if biastype not in ("none", "affine"):
        return None
    gain = _all_floats(reader, node, a, "gainprm") if "gainprm" in a else [1.0]
    bias = _all_floats(reader, node, a, "biasprm") \
        if biastype == "affine" and "biasprm" in a else []
    bias = (list(bias) + [0.0, 0.0, 0.0])[:3]
    return float(gain[0]), *(float(x) for x in bias)


def _all_floats(reader, node, a: dict, key: str) -> list:
    """All the numbers of a list attribute (MuJoCo pads gainprm and biasprm with zeros)."""
    count = len(a[key].split())
    return list(reader.floats(node, a, key, count)) if count else [0.0]


def _within(law, lo: float, hi: float) -> bool:
    """Whether a law's values stay in [lo, hi] at every time (provably: its kind bounds it)."""
    if law.kind == "constant":
        return lo <= law.params[0] <= hi
    if law.kind == "harmonic":
        mid, amp = law.params[0], abs(law.params[1])
        return lo <= mid - amp and mid + amp <= hi
    if law.kind == "tabulated":
        return law.params[2] == "pchip" and all(lo <= v <= hi for v in law.params[1])
    if law.kind in ("linear", "polynomial"):
        return all(c == 0.0 for c in law.params[1:]) and lo <= law.params[0] <= hi
    return False


def _affine(law, scale: float, offset: float):
    """The law ``scale f(t) + offset``."""
    p = law.params
    if law.kind in ("constant", "linear", "polynomial"):
        return laws.polynomial(scale * p[0] + offset, *(scale * c for c in p[1:]))
    if law.kind == "harmonic":
        return laws.harmonic(scale * p[0] + offset, scale * p[1], p[2], p[3])
    if law.kind == "tabulated":
        return laws.tabulated(p[0], [scale * v + offset for v in p[1]], p[2])
    fn = p[0]

    def scaled(t):
        f, f1, f2 = fn(t)
        return scale * f + offset, scale * f1, scale * f2

    return laws.function(scaled)


def _control(name: str, value, limited: bool, lo: float, hi: float):
    """The control of actuator ``name`` as a law, checked against its range."""
    if isinstance(value, laws.Law):
        if limited and not _within(value, lo, hi):
            raise ArgumentError(
                f"controls[{name!r}]: actuator {name!r} is ctrl-limited to [{lo}, {hi}] and "
                f"this {value.kind} law is not provably within it (MuJoCo would clamp it); "
                "give a number, a harmonic or a 'pchip' table within the range")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentTypeError(f"controls[{name!r}] must be a number or a law, got "
                                f"{type(value).__name__}")
    u = float(value)
    if not math.isfinite(u):
        raise ArgumentError(f"controls[{name!r}] must be finite, got {value!r}")
    if limited:
        u = min(max(u, lo), hi)
    return laws.constant(u)


def _limited(reader, node, a: dict, which: str) -> tuple:
    """(limited, lo, hi) of ``ctrl`` or ``force`` (MuJoCo's ``auto``: limited where a range
    is given and the compiler's autolimits is on)."""
    rng = reader.floats(node, a, f"{which}range", 2, (0.0, 0.0))
    flag = a.get(f"{which}limited", "auto")
    limited = flag == "true" or (flag == "auto" and reader.autolimits and f"{which}range" in a)
    if limited and not rng[0] < rng[1]:
        raise node.error(f"a {which}-limited actuator needs {which}range lower < upper, got "
                         f"{tuple(rng)}", f"{which}range")
    return limited, float(rng[0]), float(rng[1])


def actuator_extras(reader, root, connections, values, controls, taken) -> list:
    """The builder calls (``build``'s extras) of the file's actuators; ``values`` the
    joints' initial (position, rate) from ``initial`` (positions from the file's pose),
    ``taken`` the names in use."""
    if controls is not None and not isinstance(controls, dict):
        raise ArgumentTypeError(f"controls must be a dict {{actuator: number or law}}, got "
                                f"{type(controls).__name__}")
    controls = dict(controls or {})
    block = root.find("actuator")
    elements = [] if block is None else [n for n in block.children if n.tag in SHORTCUTS]
    by_name = {c.name: c for c in connections}
    names = [n.attrib.get("name") or f"actuator_{i}" for i, n in enumerate(elements)]
    unknown = sorted(set(controls) - set(names))
    if unknown:
        raise ArgumentError(f"controls: no actuator named {unknown[0]!r} in the file "
                            f"(actuators: {', '.join(names) or 'none'})")
    out = []
    for node, name in zip(elements, names):
        own = reader.attrs(node, "main")         # (checks the class): over <general>'s
        a = {**reader.defaults[node.attrib.get("class", "main")].get("general", {}), **own}
        joint = a.get("joint") or a.get("jointinparent")
        c = by_name.get(joint)
        if any(k in a for k in OTHER_TRANSMISSIONS) or c is None or \
                c.kind not in ("revolute", "prismatic"):
            reader.skip("actuators on tendons, sites, bodies or combined, ball or free "
                        "joints", name)
            continue
        coef = _coefficients(reader, node, a)
        if a.get("dyntype", "none") != "none" or coef is None:
            reader.skip("actuators with activation dynamics, a non-fixed gain or a "
                        "dampratio", name)
            continue
        gain, b0, b1, b2 = coef
        if b1 > 0.0 or b2 > 0.0:
            reader.skip("actuators of negative stiffness or damping", name)
            continue
        if _limited(reader, node, a, "force")[0]:
            reader.skip("actuator force limits (forcerange)", name)
        g = float(reader.floats(node, a, "gear", 1, (1.0,))[0])
        if g == 0.0:
            raise node.error("an actuator's gear must not be zero", "gear")
        u = _control(name, controls.get(name, 0.0), *_limited(reader, node, a, "ctrl"))
        label = f"{name}/actuator" if name in taken else name
        taken.add(label)
        hinge = c.kind == "revolute"
        s0 = c.ref + (values[joint][0] if hinge and joint in values else 0.0)
        if b1 < 0.0:
            kp = -b1 * g * g
            out.append(("add_servo", label, (joint,),
                        dict(target=_affine(u, -gain / (b1 * g), -b0 / (b1 * g) - s0), kp=kp),
                        node))
        else:
            out.append(("add_motor", label, (joint,), dict(law=_affine(u, g * gain, g * b0)),
                        node))
        if b2 < 0.0:
            out.append(("add_joint_damper", f"{label}/damping", (joint,),
                        dict(damping=-b2 * g * g), node))
    return out


#: The rotor's radius of gyration (m), which sets its mass: its centre never moves, so the
#: mass enters no motion, only the pin's reaction.
ROTOR_GYRATION = 0.1


def armature_extras(reader, bodies, connections, values, taken, gravity) -> list:
    """The builder calls of the joints' armature (see the module notes): for each single
    hinge or slide with armature, its rotor body, the rotor's joint to the ground and its
    coupling to the joint; the others named as not imported."""
    by_name = {c.name: c for c in connections}
    out = []
    for b in bodies.values():
        for j, a in b.joints:
            value = float(reader.floats(j, a, "armature", 1, (0.0,))[0]) \
                if j.tag == "joint" else 0.0
            if value < 0.0:
                raise j.error(f"armature must be at least 0, got {value}", "armature")
            if value == 0.0:
                continue
            name = j.attrib.get("name", b.name)
            c = by_name.get(name)
            if len(b.joints) != 1 or c is None or c.kind not in ("revolute", "prismatic"):
                reader.skip("joint armature (read for single hinges and slides)", name)
                continue
            rotor, point = f"{name}/rotor".replace(".", "_"), f"{name}_rotor".replace(".", "_")
            if rotor in taken or point in taken:
                raise j.error(f"the armature's rotor body {rotor!r} is named like a body of "
                              "the file", "armature")
            taken.update((rotor, point))
            x = tuple(float(v) for v in c.x_first)
            rate = values[name][1] if name in values else 0.0
            if c.kind == "revolute":
                axis = tuple(float(v) for v in c.axis)
                mass, inertia = value / ROTOR_GYRATION**2, (value, value, value)
                motion = dict(angular_velocity=tuple(rate * v for v in axis))
                joint, coupling = ("add_revolute", f"{rotor}_pin"), (
                    "add_gear_pair", dict(teeth=(1, 1), module=2.0, sense="same"))
            else:
                axis = _level(gravity)
                mass, inertia = value, (value * ROTOR_GYRATION**2,) * 3
                motion = dict(velocity=tuple(rate * v for v in axis))
                joint, coupling = ("add_prismatic", f"{rotor}_slide"), (
                    "add_joint_coupling", dict(ratio=1.0))
            out += [
                ("add_ground_point", point, (), dict(position=x), j),
                ("add_body", rotor, (), dict(mass=mass, inertia=inertia,
                                             points={"pin": (0.0, 0.0, 0.0)}, position=x,
                                             **motion), j),
                (joint[0], joint[1], (), dict(first=f"{rotor}.pin", second=f"ground.{point}",
                                              axis=axis), j),
                (coupling[0], f"{name}/armature", (name,),
                 dict(second=joint[1], **coupling[1]), j)]
    return out


def _level(gravity) -> tuple:
    """A unit direction normal to gravity (a slide's rotor moves along it: gravity does
    no work on it)."""
    g = np.asarray(gravity, dtype=float)
    if not np.any(g):
        return (1.0, 0.0, 0.0)
    e = np.eye(3)[int(np.argmin(np.abs(g)))]
    d = np.cross(g, e)
    return tuple(float(v) for v in d / np.linalg.norm(d))
