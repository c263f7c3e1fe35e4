"""Natural coordinates: spherical and spatial linkages compiled from their points and planes.

A :class:`linkdyn.geometric.Linkage` of kind ``"spherical"`` or ``"spatial"`` compiles here
into a :class:`NaturalModel`, whose coordinates are the Cartesian coordinates of the moving
joints themselves (no bodies, no angles):

- a point (a revolute joint or coupler point of a spherical linkage, a spherical joint or
  coupler point of a spatial one): x, y, z (coordinates ``"J3.x"``, ``"J3.y"``, ``"J3.z"``);
- a prismatic joint of a spherical linkage, the plane through the sphere's centre: its unit
  normal (``"J3.nx"``, ``"J3.ny"``, ``"J3.nz"``).

Joints on the ground link are constants. Every constraint row is a quadratic form in these
coordinates, evaluated by the compiled kernels' generic rows, so Phi_q and the acceleration
right-hand side are exact (no finite differences, no square roots):

- unit rows ``"J3.unit"``: m . m = 1 for every moving point and normal of a spherical linkage
  (the point-line-plane paper's sphere and homogeneous-coordinate rows, eqs. 8 and 9),
  unless a link's basis below already fixes its length;
- a link of two members: m1 . m2 = const for a spherical linkage (the cosine of the arc
  between two points, the sine of a point's arc distance from a plane, the cosine of the angle
  between two planes: the paper's RR, RP and PP rows, eqs. 1-7, with unit vectors), and
  |p1 - p2|^2 = const for a spatial one (row ``"L1.J1-J6"``);
- a link of three or more members: a basis and the others' fixed coordinates in it. In a
  spherical linkage the basis is the least parallel pair (a, b), with the row a . b = const,
  and every other member is m = alpha a + beta b + gamma a x b (rows ``"L2.J3.x|y|z"``); in a
  spatial one the basis is the triangle (a, b, c) of largest area, with its three squared
  side lengths, and every other member is m = a + alpha (b - a) + beta (c - a) +
  gamma (b - a) x (c - a). Unlike the paper's pairwise distances this keeps the link rigid
  with no mirror-image branch and no singular Jacobian where its joints become coplanar;
- the input ``"input"``: a rotation of the input link about the axis through the centre and
  the input joint (a revolute point, or the pole of a prismatic plane), written as
  (m . e2) cos f - (m . e1) sin f = 0 for one of its moving members m (e1, e2 orthonormal,
  perpendicular to the axis, e1 towards m at the start); or a linear actuator between two
  points, |p1 - p2|^2 - f^2 = 0, f the actuator's length.

The lengths, cosines and basis coordinates are measured on the description's coordinates,
which are therefore an assembled configuration: the start of the sweep. They are analytic
functions of those coordinates (squares, products and solved 3 x 3 systems), so
:func:`parameter_kernels` differentiates the rows with respect to any joint coordinate by
one complex step, exactly, for the design sensitivities. These models are kinematic (unit
masses in the mass matrix, no forces): :func:`linkdyn.kinematics` is their solver, and the
solvers of dynamics refuse them; spatial bodies with masses are the natural coordinates of
:mod:`linkdyn.compile.spatial`.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ..elements.description import Description
from ..elements.laws import linear
from ..errors import ModelError, counted
from .._checks import checked_path
from .._kernels import Kernels
from .model import Model, checked_coordinates, checked_time
from .patterns import Numbering, compile_rows
from .patterns import mul as _mul

__all__ = ["NaturalModel", "number_linkage", "parameter_kernels"]

#: A link whose members are this close to parallel (spherical: |a x b| of unit vectors) or to
#: collinear (spatial: the largest triangle's area relative to its longest side squared)
#: has no well-defined orientation.
DEGENERATE = 1e-9

#: A joint coordinate's last key in a parameter path -> its component.
_COMPONENT = {"x": 0, "y": 1, "z": 2, "0": 0, "1": 1, "2": 2}


def _add(*term_dicts):
    out = {}
    for terms in term_dicts:
        for k, v in terms.items():
            out[k] = out.get(k, 0.0) + v
    return out


def _scale(terms, c):
    return {k: c * v for k, v in terms.items()}


def _linear(form):
    """A linear form {coordinate: coef, -1: constant} as kernel terms."""
    return {((k, -1) if k >= 0 else (-1, -1)): v for k, v in form.items()}


def _dot(u, w):
    return _add(*(_mul(a, b) for a, b in zip(u, w)))


def _cross(u, w):
    """Components of u x w (vectors of linear forms) as kernel terms."""
    out = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        out.append(_add(_mul(u[j], w[k]), _mul(u[k], w[j], -1.0)))
    return out


def _diff(u, w):
    return tuple(_add(a, _scale(b, -1.0)) for a, b in zip(u, w))


class NaturalModel(Model):
    """A compiled spherical or spatial linkage (see :mod:`linkdyn.natural`).

    Attributes as :class:`linkdyn.Model`, with no bodies: ``coordinate_names`` are the moving
    joints' ``"J.x|y|z"`` (points) or ``"J.nx|ny|nz"`` (plane normals); ``marker_names`` are
    every point joint (ground joints included), whose positions ``marker_positions`` gives
    in 3D. ``description`` is the :class:`linkdyn.geometric.Linkage`; ``space`` is
    ``"spherical"`` or ``"spatial"``."""

    marker_dimension = 3
    dynamic = False

    def __init__(self, linkage, arrays: dict, names: dict, markers: tuple, law,
                 turn=None, *, compiler):
        super().__init__(linkage, arrays, names, compiler)
        #: the input turn's measured member: (coordinate index, e1, e2), or None (actuator)
        self._turn = turn
        self.space = linkage.kind
        self._driver_laws = (("input", law),)
        #: (nmarkers, 3): coordinate index of each marker coordinate, or -1 (ground joint)
        self.marker_coordinate = markers[0]
        #: (nmarkers, 3): positions of the ground markers (zero where moving)
        self.marker_constant = markers[1]

    def __repr__(self):
        return (f"<linkdyn.NaturalModel {self.name!r} ({self.space}): "
                f"{counted(len(self.joint_names), 'joint')}, {counted(self.nq, 'coordinate')}, "
                f"{counted(self.nc, 'constraint')}>")

    @property
    def driver_laws(self) -> tuple:
        return self._driver_laws

    @property
    def input_turns(self) -> bool:
        """Whether the input turns a link about a ground joint (not a linear actuator)."""
        return self._turn is not None

    def orientation_cosines(self, q, t: float = 0.0, state=None) -> np.ndarray:
        """The input turn's row, sin(angle - f), is also met half a turn away: its cosine
        (+1 intended, -1 flipped); empty for an actuator input."""
        q, t = checked_coordinates(self, q), checked_time(t)
        if self._turn is None:
            return np.zeros(0)
        k, e1, e2 = self._turn
        law = self._driver_laws[0][1]
        f = (state.law_values[0] if law.is_function and state is not None else law(t)[0])
        m = q[k:k + 3]
        return np.array([((m @ e1) * np.cos(f) + (m @ e2) * np.sin(f)) / np.hypot(m @ e1,
                                                                                   m @ e2)])

    def _markers_linear(self, z) -> np.ndarray:
        z = checked_coordinates(self, z, "coordinates")
        idx = self.marker_coordinate
        return z[..., np.maximum(idx, 0)] * (idx >= 0)

    def marker_positions(self, q) -> np.ndarray:
        """Positions of all markers: q of shape (..., nq) -> (..., nmarkers, 3)."""
        return self._markers_linear(q) + self.marker_constant

    def marker_velocities(self, v) -> np.ndarray:
        """Marker velocities (or accelerations) -> (..., nmarkers, 3)."""
        return self._markers_linear(v)

    def save(self, path) -> None:
        """Write the linkage file (see :mod:`linkdyn.geometric`)."""
        self.description.save(checked_path("save", path))


def _unit(v):
    """v / |v|, as sqrt(v . v): the same value as np.linalg.norm for real v, and analytic
    for the complex values of :func:`parameter_kernels`' complex step."""
    v = np.asarray(v, dtype=np.result_type(np.asarray(v), float))
    return v / np.sqrt(v @ v)


def _moving(linkage) -> dict:
    """The moving joints (not on the ground link) -> their first coordinate's index."""
    fixed = set(linkage.links[linkage.ground])
    return {j: 3 * k for k, j in enumerate(j for j in linkage.joints if j not in fixed)}


def _joint_values(linkage, step=None) -> dict:
    """joint -> its vector (a unit vector on a sphere); ``step``: (joint, component, h), the
    complex step of one coordinate (complex vectors, :func:`parameter_kernels`)."""
    value = {}
    for j in linkage.joints.values():
        v = np.array(j.coordinates[:3], dtype=float if step is None else complex)
        if step is not None and j.name == step[0]:
            v[step[1]] += 1j * step[2]
        value[j.name] = _unit(v) if linkage.kind == "spherical" else v
    return value


def _rows(linkage, holders, value, index, links=None) -> tuple:
    """The generic rows from the joints' vectors ``value`` (their coefficients are
    polynomials in them and in the basis coordinates solved from them: analytic, so complex
    values give their derivatives by the complex step), the input's law (offset, rate) and
    its measured member: (rows, (offset, rate), turn). ``links``: only these links' rows and
    the input's (no unit rows: they hold no data)."""
    forms = _Forms(linkage.kind == "spherical", value, index)
    combined = set()
    for name, members in linkage.links.items():
        if name != linkage.ground and (links is None or name in links):
            combined |= _link_rows(forms, name, members, linkage.ground)
    units = []
    if forms.spherical and links is None:
        for j in index:
            if j not in combined:
                units.append((f"{j}.unit", j, [(_add(_dot(forms.vec(j), forms.vec(j)),
                                                      {(-1, -1): -1.0}), 0, -1)]))
    law, turn = _input_row(forms, linkage, holders)
    return units + forms.rows, law, turn


def number_linkage(linkage) -> Numbering:
    """Number the moving joints' coordinates and the rows of a spherical or spatial
    :class:`linkdyn.geometric.Linkage` (validated by it): every row is a generic row."""
    holders = linkage.checked_holders()   # a ground, an input on it, joints held right
    joints = linkage.joints
    value = _joint_values(linkage)
    index = _moving(linkage)
    moving = list(index)
    nq = 3 * len(moving)
    generic, (offset, rate), turn = _rows(linkage, holders, value, index)
    law = linear(offset, rate)
    q0 = np.concatenate([value[j] for j in moving]) if moving else np.zeros(0)
    points = [j for j in joints.values() if j.kind != "prismatic"]
    coord = np.array([[index[j.name] + x if j.name in index else -1 for x in range(3)]
                      for j in points], dtype=np.intp).reshape(-1, 3)
    const = np.array([[0.0] * 3 if j.name in index else value[j.name] for j in points],
                     dtype=float).reshape(-1, 3)
    coord.flags.writeable = False
    const.flags.writeable = False
    none = np.zeros(0, dtype=np.intc)

    def family_arrays(slot, hess_slot) -> dict:
        """No bodies: no unit-vector or revolute rows of the planar kernels."""
        return dict(nbody=0, unit_row=none, unit_body=none, unit_slot=none, unit_hslot=none,
                    rev_body=none, rev_local=np.zeros(0), rev_row=none, rev_slot=none)

    empty = Description(name=linkage.name, gravity=(0.0, 0.0), ground=(), bodies=(),
                        joints=(), markers=())
    return Numbering(
        description=linkage, model_type=NaturalModel, model_args=((coord, const), law, turn),
        q0=q0, v0=np.zeros(nq), hold=np.zeros(nq, dtype=bool), mass=np.ones(nq),
        q_applied=np.zeros(nq),
        coordinates=[f"{j}.{c}" for j in moving
                     for c in (("nx", "ny", "nz") if joints[j].kind == "prismatic"
                               else ("x", "y", "z"))],
        rows=[], cols=[], row_names=[], owners=[], nc=0, hdiag=np.zeros(0, dtype=np.intc),
        generic=generic, laws=[law],
        force_description=empty, body_index={}, local_of=None, ground={},
        marker_body=np.zeros(0, dtype=np.intp), marker_local=np.zeros((0, 2)),
        names=dict(bodies=(), joints=tuple(joints), markers=tuple(j.name for j in points),
                   drivers=("input",), forces=()),
        family_arrays=family_arrays)


class _Forms:
    """The joints' vectors as linear forms, and the generic rows made of them."""

    def __init__(self, spherical, value, index):
        self.spherical, self.value, self.index = spherical, value, index
        self.rows = []              # (name, owner, parts)

    def vec(self, j):
        """The joint's vector as three linear forms."""
        if j in self.index:
            return tuple({self.index[j] + i: 1.0} for i in range(3))
        return tuple({-1: x.item()} for x in self.value[j])

    def row(self, name, owner, terms, tf=0, law=-1, extra=()):
        self.rows.append((name, owner, [(terms, tf, law), *extra]))

    def pair_row(self, link, a, b):
        """Two joints of a link keep a . b (spherical) or |a - b|^2 (spatial)."""
        value, vec = self.value, self.vec
        if self.spherical:
            terms, c = _dot(vec(a), vec(b)), (value[a] @ value[b]).item()
        else:
            d, dv = _diff(vec(a), vec(b)), value[a] - value[b]
            terms, c = _dot(d, d), (dv @ dv).item()
            if c.real == 0.0:
                raise ModelError(f"link '{link}': joints {a} and {b} coincide", link)
        self.row(f"{link}.{a}-{b}", link, _add(terms, {(-1, -1): -c}))


def _basis(spherical, points) -> tuple:
    """(size, indices, span) of a link's basis among its members' ``points``: spherical,
    the pair (a, b) whose cross product is longest; spatial, the triangle (a, b, c) of
    largest area (twice it: the length of (b - a) x (c - a)), and the largest distance
    from the first member (the first such on ties, in the order of
    itertools.combinations). Every candidate at once: this runs for each link of every
    model a design sweep or synthesis compiles."""
    p = np.array(points, dtype=float)
    if spherical:
        idx = np.array(list(combinations(range(len(p)), 2)), dtype=np.intp)
        sides = np.cross(p[idx[:, 0]], p[idx[:, 1]])
    else:
        idx = np.array(list(combinations(range(len(p)), 3)), dtype=np.intp)
        sides = np.cross(p[idx[:, 1]] - p[idx[:, 0]], p[idx[:, 2]] - p[idx[:, 0]])
    sizes = np.sqrt(np.einsum("ij,ij->i", sides, sides))
    best = int(np.argmax(sizes))
    span = float(np.sqrt(np.einsum("ij,ij->i", p - p[0], p - p[0])).max())
    return float(sizes[best]), tuple(int(k) for k in idx[best]), span


def _link_rows(forms: _Forms, name, members, ground) -> set:
    """The rows that keep link ``name`` rigid; returns the joints held by a basis of it."""
    value, vec, index = forms.value, forms.vec, forms.index
    if not any(m in index for m in members):
        raise ModelError(f"link '{name}': every joint it carries is on the ground link "
                         f"'{ground}', so it cannot move (make it part of the ground)", name)
    if len(members) == 2:
        forms.pair_row(name, *members)
        return set()
    # A basis of the link: spherical, its least parallel pair (a, b) about the centre;
    # spatial, its triangle (a, b, c) of largest area, about a.
    zero = ({}, {}, {})
    size, base, span = _basis(forms.spherical, [value[m].real for m in members])
    base = tuple(members[k] for k in base)
    if forms.spherical:
        if size <= DEGENERATE:
            raise ModelError(f"link '{name}': its joints lie on one axis through the "
                             "centre, so its rotation about that axis is undefined", name)
        pairs = [base]
        origin, o_v = zero, np.zeros(3)
        u, w = vec(base[0]), vec(base[1])
        u_v, w_v = value[base[0]], value[base[1]]
    else:
        if size <= DEGENERATE * max(span, 1e-300) ** 2:
            raise ModelError(f"link '{name}': its joints lie on one line, so its rotation "
                             "about that line is undefined", name)
        a, b, c = base
        pairs = [(a, b), (b, c), (a, c)]
        origin, o_v = vec(a), value[a]
        u, w = _diff(vec(b), vec(a)), _diff(vec(c), vec(a))
        u_v, w_v = value[b] - value[a], value[c] - value[a]
    for pair in pairs:
        forms.pair_row(name, *pair)
    # Every other joint keeps its coordinates in the basis (u, w, u x w) about the
    # origin: m = o + alpha u + beta w + gamma u x w, three rows.
    basis = np.column_stack([u_v, w_v, np.cross(u_v, w_v)])
    cross = _cross(u, w)
    held = set()
    for m in (x for x in members if x not in base):
        alpha, beta, gamma = np.linalg.solve(basis, value[m] - o_v)
        for x in range(3):
            terms = _add(_linear(vec(m)[x]), _scale(_linear(origin[x]), -1.0),
                         _scale(_linear(u[x]), -alpha), _scale(_linear(w[x]), -beta),
                         _scale(cross[x], -gamma))
            forms.row(f"{name}.{m}.{'xyz'[x]}", name, terms)
        held.add(m)
    return held


def _input_row(forms: _Forms, linkage, holders):
    """The input row (law 0): a turn about a ground joint's axis or a linear actuator.
    Returns its law's (offset, rate) (a linear law: the actuator's length, or 0 for a turn)
    and the turn's measured member (or None)."""
    value, vec, index = forms.value, forms.vec, forms.index
    links, ground = linkage.links, linkage.ground
    kind, *spec = linkage.driving
    if kind == "rotation":
        joint, rate = spec
        axis = value[joint]
        link = next(k for k in holders[joint] if k != ground)
        cands = [m for m in links[link] if m in index]
        radius = {m: float(np.linalg.norm((value[m] - (value[m] @ axis) * axis).real))
                  for m in cands}
        m = max(cands, key=lambda x: radius[x])
        if radius[m] <= DEGENERATE:
            raise ModelError(f"input: link '{link}' has no joint off the axis of '{joint}', so "
                             "its rotation cannot be measured", joint)
        e1 = _unit(value[m] - (value[m] @ axis) * axis)
        e2 = np.cross(axis, e1)

        def const(e):
            return tuple({-1: x.item()} for x in e)

        forms.row("input", "input", _dot(vec(m), const(e2)), 1, 0,
                  [(_scale(_dot(vec(m), const(e1)), -1.0), 2, 0)])
        return (0.0, rate), (index[m], e1, e2)
    (p1, p2), rate = spec
    d = _diff(vec(p1), vec(p2))
    d_v = value[p1] - value[p2]
    length = np.sqrt(d_v @ d_v).item()
    if length.real == 0.0:
        raise ModelError(f"actuator: joints {p1} and {p2} coincide", p1)
    forms.row("input", "input", _dot(d, d), 0, -1, [({(-1, -1): -1.0}, 4, 0)])
    return (length, rate), None


#: The complex step of :func:`parameter_kernels` (a coordinate's imaginary part): the
#: derivative is the imaginary part over it, with no difference taken (exact to round-off)
#: and a truncation error of order its square.
COMPLEX_STEP = 1e-30


def parameter_kernels(model: NaturalModel, names) -> list | None:
    """The derivatives of a linkage's rows with respect to joint coordinates, as kernels:
    per name ``joints.<joint>.coordinates.<x|y|z|0|1|2>``, (kernels, markers), kernels
    whose Phi, Phi_q v + Phi_t and Phi_q a - gamma at any state are those of the model's
    differentiated with respect to that coordinate at fixed state (the rows' coefficients
    are polynomials in the joints' vectors and in basis coordinates solved from them:
    their derivatives come from one complex step each, exact to round-off, and the rows are
    linear in them; an actuator's length enters through its law, f^2 = (L + rate t)^2, whose
    derivative 2 f dL/dp is a term of its own), and the derivatives (nmarkers, 3) of the
    markers on ground joints. None where a name is not such a coordinate (the caller then
    differences compiled members)."""
    linkage = model.description
    steps = []
    for name in names:
        parts = name.split(".")
        if len(parts) != 4 or parts[0] != "joints" or parts[2] != "coordinates" or \
                parts[1] not in linkage.joints or parts[3] not in _COMPONENT:
            return None
        steps.append((parts[1], _COMPONENT[parts[3]], COMPLEX_STEP))
    holders, index = linkage.checked_holders(), _moving(linkage)
    points = [j.name for j in linkage.joints.values() if j.kind != "prismatic"]
    out = []
    for step in steps:
        value = _joint_values(linkage, step)
        # only the rows of the links that carry the joint (and the input's) can move
        links = {name for name, members in linkage.links.items() if step[0] in members}
        rows, (offset, _), _ = _rows(linkage, holders, value, index, links)
        moved = {name: (owner, parts) for name, owner, parts in rows}
        if not set(moved) <= set(model.constraint_names):
            return None         # (the basis is chosen on the real parts: never expected)
        d_offset = np.imag(offset) / COMPLEX_STEP
        derived = []
        for name, owner in zip(model.constraint_names, model.constraint_owner):
            owner, parts = moved.get(name, (owner, ()))
            out_parts = []
            for terms, tf, law in parts:
                out_parts.append(({k: c.imag / COMPLEX_STEP for k, c in terms.items()
                                   if c.imag != 0.0}, tf, law))
                if tf == 4 and d_offset != 0.0:     # c f^2: c 2 f df/dp
                    out_parts.append(({k: 2.0 * c.real * d_offset for k, c in terms.items()},
                                      3, law))
            derived.append((name, owner, out_parts))
        garrays = compile_rows(derived, model.nq, 0, [], [], [], [])[0]
        arrays = dict(model.kernels.arrays)
        arrays.update(garrays, nc=model.nc, nbody=0, body_stride=model.kernels.body_stride)
        markers = np.array([np.imag(value[j]) / COMPLEX_STEP if j not in index
                            else np.zeros(3) for j in points]).reshape(-1, 3)
        out.append((Kernels(arrays), markers))
    return out
