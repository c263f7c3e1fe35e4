"""Planar linkages of seed 001, from its tables of joints (points and lines) and links, built
with :mod:`linkdyn.geometric` (lengths in the tables' units, taken as m). Each is driven at
its input joint at 1 rad/s, for ``linkdyn.kinematics``.

``stephenson2()``: the Stephenson-II six-bar (Table 1), with a prismatic joint J3 between links
L2 and L3 and the slider L5 on the ground line J7; coupler point J8.
``jansen_modified()``: Theo Jansen's linkage with the revolute joint between L2 and L4 replaced
by the floating prismatic joint J3 (Table 3); J8 is the foot.
"""

from __future__ import annotations

from ..geometric import Linkage
from ..model import Model

__all__ = ["stephenson2", "jansen_modified", "linkage"]


def _linkage(name, joints, links, ground, input_joint) -> Linkage:
    g = Linkage(name)
    for joint, kind, coordinates in joints:
        getattr(g, kind)(joint, coordinates)
    for link, members in links:
        g.link(link, members, ground=link == ground)
    g.input(input_joint, rate=1.0)
    return g


def linkage(name: str) -> Linkage:
    """The :class:`linkdyn.geometric.Linkage` of ``"stephenson2"`` or ``"jansen_modified"``
    (its points and lines, e.g. to write it as a linkage file with geometric.to_dict)."""
    tables = {"stephenson2": _stephenson2, "jansen_modified": _jansen_modified}
    if name not in tables:
        raise KeyError(f"no linkage {name!r} (linkages: {', '.join(tables)})")
    return tables[name]()


def stephenson2() -> Model:
    """Seed 001's Stephenson-II six-bar (Table 1): input J1, coupler point J8."""
    return _stephenson2().build()


def jansen_modified() -> Model:
    """Seed 001's modified Theo Jansen linkage (Table 3): input J1, foot J8 (a coupler point
    of L7 in the table, listed there as a joint of that link)."""
    return _jansen_modified().build()


def _stephenson2() -> Linkage:
    return _linkage("stephenson2", [
        ("J1", "revolute", (0.0, -1.0)), ("J2", "revolute", (1.0, 0.5)),
        ("J3", "prismatic", (-0.17, 0.98, -4.28)), ("J4", "revolute", (3.25, 1.4)),
        ("J5", "revolute", (7.72, 1.44)), ("J6", "revolute", (11.66, 4.17)),
        ("J7", "prismatic", (0.0, 1.0, 1.24)), ("J8", "coupler", (6.0, -2.0))],
        [("L1", ("J1", "J2")), ("L2", ("J2", "J3", "J4")), ("L3", ("J3", "J6")),
         ("L4", ("J4", "J5", "J8")), ("L5", ("J5", "J6", "J7")), ("L6", ("J1", "J7"))],
        "L6", "J1")


def _jansen_modified() -> Linkage:
    return _linkage("jansen_modified", [
        ("J1", "revolute", (2.77, 2.31)), ("J2", "revolute", (2.17, 3.33)),
        ("J3", "prismatic", (-0.50, 0.87, -4.80)), ("J4", "revolute", (0.66, -1.3)),
        ("J5", "revolute", (-0.22, 1.72)), ("J6", "revolute", (-3.17, 0.66)),
        ("J7", "revolute", (-2.08, -2.24)), ("J8", "coupler", (2.54, -4.64))],
        [("L1", ("J1", "J2")), ("L2", ("J2", "J3")), ("L3", ("J2", "J4")),
         ("L4", ("J3", "J5", "J6")), ("L5", ("J5", "J4")), ("L6", ("J6", "J7")),
         ("L7", ("J4", "J7", "J8")), ("L8", ("J1", "J5"))],
        "L8", "J1")
