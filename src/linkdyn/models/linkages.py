"""The linkages of the point-line-plane paper (a geometric-constraints approach to unified
kinematic simulation of n-bar planar and spherical linkages), from its tables of joints
(points, lines and planes) and links, built with :mod:`linkdyn.geometric` (lengths in the
tables' units, taken as m). Each is driven at its input at 1 rad/s (or 1 m/s), for
``linkdyn.kinematics``.

Planar:
``stephenson2()``: the Stephenson-II six-bar (Table 1), with a prismatic joint J3 between links
L2 and L3 and the slider L5 on the ground line J7; coupler point J8.
``jansen_modified()``: Theo Jansen's linkage with the revolute joint between L2 and L4 replaced
by the floating prismatic joint J3 (Table 3); J8 is the foot.
``crank_rocker()``: a Grashof crank-rocker four-bar, the kind of linkage of the paper's speed
comparison with Autodesk Inventor (the paper gives no dimensions; these are ours: ground 4,
crank 1, coupler 4, rocker 3), coupler point P.

Spherical (points on the unit sphere, rounded to two decimals in the tables and projected
onto it):
``spherical_rrpr()``: the spherical analogue of the Whitworth quick-return mechanism (Table 2):
input J1, the prismatic plane J3 between coupler L2 and output L3, coupler point J5.
``spherical_watt1()``: a spherical Watt-I six-bar (Table 4) driven along the prismatic
plane J1 (normal (0, 0, 1): the input link turns about the z axis), coupler point J8; its
input rocks between two limit positions.

Spatial:
``five_ss()``: the 5-SS platform linkage (Table 5): five binary links with spherical joints
between the ground (J1-J5) and the coupler platform (J6-J10, coupler point J11), driven by a
linear actuator from J1 to J7 whose length grows at 1 unit/s.
"""

from __future__ import annotations

from ..errors import UnknownNameError
from ..compile.model import Model
from ..describe.geometric import Linkage

__all__ = ["stephenson2", "jansen_modified", "crank_rocker", "spherical_rrpr",
           "spherical_watt1", "five_ss", "linkage", "four_bar", "LINKAGES"]


def _linkage(name, joints, links, ground, input_joint, kind="planar", rate=1.0) -> Linkage:
    g = Linkage(name, kind)
    for joint, jkind, coordinates in joints:
        getattr(g, jkind)(joint, coordinates)
    for link, members in links:
        g.link(link, members, ground=link == ground)
    if isinstance(input_joint, tuple):
        g.actuator(*input_joint, rate=rate)
    else:
        g.input(input_joint, rate=rate)
    return g


def four_bar(points, name: str = "fourbar", rate: float = 1.0) -> Linkage:
    """A planar four-bar :class:`linkdyn.geometric.Linkage` from its joints' positions:
    ``points`` maps "A" (the crank's ground pivot), "B" (crank to coupler), "C" (coupler to
    rocker), "D" (the rocker's ground pivot) and optionally "P" (a coupler point) to (x, y).
    Links ``crank`` (A, B), ``coupler`` (B, C, P), ``rocker`` (C, D) and the ground
    ``base`` (A, D); the input turns the crank about A at ``rate`` rad/s. The design
    variables of a synthesis (:mod:`linkdyn.synthesis`) start from such a linkage."""
    missing = [j for j in "ABCD" if j not in points]
    if missing:
        from ..errors import ArgumentError

        raise ArgumentError(f"four_bar: points needs A, B, C and D; missing "
                            f"{', '.join(missing)}")
    joints = [(j, "revolute", tuple(points[j])) for j in "ABCD"]
    coupler = ("B", "C")
    if "P" in points:
        joints.append(("P", "coupler", tuple(points["P"])))
        coupler += ("P",)
    return _linkage(name, joints, [("crank", ("A", "B")), ("coupler", coupler),
                                   ("rocker", ("C", "D")), ("base", ("A", "D"))], "base", "A",
                    rate=rate)


def linkage(name: str) -> Linkage:
    """The :class:`linkdyn.geometric.Linkage` of one of :data:`LINKAGES` (its points, lines
    and planes, e.g. to write it as a linkage file with geometric.to_dict)."""
    if name not in _TABLES:
        raise UnknownNameError(f"no linkage {name!r} (linkages: {', '.join(_TABLES)})")
    return _TABLES[name]()


def stephenson2() -> Model:
    """The point-line-plane paper's Stephenson-II six-bar (Table 1): input J1, coupler point J8."""
    return _stephenson2().build()


def jansen_modified() -> Model:
    """The point-line-plane paper's modified Theo Jansen linkage (Table 3): input J1, foot J8 (a
    coupler point of L7 in the table, listed there as a joint of that link)."""
    return _jansen_modified().build()


def crank_rocker() -> Model:
    """A Grashof crank-rocker four-bar (see the module notes): input A, coupler point P."""
    return _crank_rocker().build()


def spherical_rrpr() -> Model:
    """The point-line-plane paper's spherical RRPR four-bar (Table 2): input J1, coupler point
    J5."""
    return _spherical_rrpr().build()


def spherical_watt1() -> Model:
    """The point-line-plane paper's spherical Watt-I six-bar (Table 4): input along the plane
    J1, coupler point J8."""
    return _spherical_watt1().build()


def five_ss() -> Model:
    """The point-line-plane paper's spatial 5-SS platform linkage (Table 5): actuator J1-J7,
    coupler point J11."""
    return _five_ss().build()


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


def _crank_rocker() -> Linkage:
    # B and C from the lengths: C on both circles |C - B| = 4, |C - D| = 3.
    cx = 11.0 / 3.0
    cy = (9.0 - (4.0 - cx) ** 2) ** 0.5
    return four_bar({"A": (0.0, 0.0), "B": (1.0, 0.0), "C": (cx, cy), "D": (4.0, 0.0),
                     "P": (3.0, 3.5)}, name="crank_rocker")


def _spherical_rrpr() -> Linkage:
    return _linkage("spherical_rrpr", [
        ("J1", "revolute", (0.94, 0.24, 0.24)), ("J2", "revolute", (0.80, 0.27, 0.53)),
        ("J3", "prismatic", (0.68, -0.68, 0.26)), ("J4", "revolute", (-0.38, 0.76, 0.53)),
        ("J5", "coupler", (0.50, -0.21, 0.84))],
        [("L1", ("J1", "J2")), ("L2", ("J2", "J3", "J5")), ("L3", ("J3", "J4")),
         ("L4", ("J1", "J4"))], "L4", "J1", "spherical")


def _spherical_watt1() -> Linkage:
    g = _linkage("spherical_watt1", [
        ("J1", "prismatic", (0.0, 0.0, 1.0)), ("J2", "revolute", (0.93, 0.0, 0.37)),
        ("J3", "revolute", (0.85, -0.17, 0.51)), ("J4", "revolute", (0.70, 0.70, 0.14)),
        ("J5", "revolute", (0.73, 0.49, 0.49)), ("J6", "revolute", (0.81, 0.41, -0.41)),
        ("J7", "revolute", (0.48, -0.10, 0.87)), ("J8", "coupler", (0.49, 0.49, 0.73))],
        [("L1", ("J1", "J2", "J3")), ("L2", ("J2", "J4", "J5")), ("L3", ("J4", "J6")),
         ("L4", ("J3", "J7")), ("L5", ("J5", "J7", "J8")), ("L6", ("J1", "J6"))],
        "L6", "J1", "spherical")
    # The slide's input rocks between two limit positions: the analysis runs it back there.
    g.set_run_defaults(at_limit="reverse")
    return g


def _five_ss() -> Linkage:
    points = [(-7.2, -5.29, 7.87), (5.72, -0.71, -8.26), (-8.75, -4.60, 5.49),
              (-10.00, -8.72, 6.09), (-3.88, 6.61, 8.91), (-6.61, -9.99, 3.93),
              (8.19, -9.05, 6.07), (7.84, -5.73, -0.62), (4.15, -0.48, -2.04),
              (-0.97, -9.04, 1.92)]
    joints = [(f"J{k + 1}", "spherical", p) for k, p in enumerate(points)]
    joints.append(("J11", "coupler", (2.20, -7.17, 5.36)))
    links = [(f"L{k + 1}", (f"J{k + 1}", f"J{k + 6}")) for k in range(5)]
    links += [("L6", ("J6", "J7", "J8", "J9", "J10", "J11")),
              ("L7", ("J1", "J2", "J3", "J4", "J5"))]
    return _linkage("five_ss", joints, links, "L7", ("J1", "J7"), "spatial")


_TABLES = {"stephenson2": _stephenson2, "jansen_modified": _jansen_modified,
           "crank_rocker": _crank_rocker, "spherical_rrpr": _spherical_rrpr,
           "spherical_watt1": _spherical_watt1, "five_ss": _five_ss}

#: Names of the built-in linkages of points, lines and planes.
LINKAGES = tuple(_TABLES)
