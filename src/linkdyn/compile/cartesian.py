"""Planar bodies in fully Cartesian coordinates: body i owns q[4i:4i+4] = (x, y, ux, uy), its
centre of mass and a body-fixed unit vector, so the mass matrix is constant and diagonal,
diag(m, m, Jz, Jz). Numbering: one unit-vector row per body in body order (an armature's
rotor has two turn rows instead), then the revolute joints' two rows each, then the gear
pairs' angle rows (:mod:`.angles`), then the generic rows: prismatic joints, drivers and armatures, quadratic forms in these coordinates (terms
coef * g(t) * q_a * q_b, with g a driving law's 1, cos f, sin f, f or f^2).
"""

from __future__ import annotations

import math

import numpy as np

from ..elements import forces as _forces
from ..elements import cams as _cams
from ..elements import gears as _gears
from ..elements.bodies import GROUND
from ..elements.description import Description
from ..elements.joints import (AngleDriverSpec, CoordinateDriverSpec, PrismaticSpec,
                               RevoluteSpec, SlideDriverSpec)
from ..errors import ModelError
from .angles import AngleRow
from .model import COORDINATES, Model
from .patterns import Numbering
from .patterns import mul as _mul

__all__ = ["number_bodies", "point_arrays"]


def _point_form(body: int, local, ground_xy=None):
    if body < 0:
        return {-1: ground_xy[0]}, {-1: ground_xy[1]}
    xi, eta = local
    c = 4 * body
    return {c: 1.0, c + 2: xi, c + 3: -eta}, {c + 1: 1.0, c + 3: xi, c + 2: eta}


def _u_form(body: int):
    if body < 0:
        return {-1: 1.0}, {-1: 0.0}
    return {4 * body + 2: 1.0}, {4 * body + 3: 1.0}


def _comb(*pairs):
    """sum of coef * form."""
    out = {}
    for coef, form in pairs:
        for k, v in form.items():
            out[k] = out.get(k, 0.0) + coef * v
    return out


def _rotate(ux, uy, angle):
    c, s = math.cos(angle), math.sin(angle)
    return _comb((c, ux), (-s, uy)), _comb((s, ux), (c, uy))


def _cross(a, b):
    t = _mul(a[0], b[1])
    for k, v in _mul(a[1], b[0], -1.0).items():
        t[k] = t.get(k, 0.0) + v
    return t


def _dot(a, b):
    t = _mul(a[0], b[0])
    for k, v in _mul(a[1], b[1]).items():
        t[k] = t.get(k, 0.0) + v
    return t


def _point_of(desc, body_index, ground, ref):
    """(body index or -1, the linear forms of point ``ref``'s x and y)."""
    b, p = ref
    if b == GROUND:
        return -1, _point_form(-1, None, ground[p])
    i = body_index[b]
    return i, _point_form(i, desc.bodies[i].local_points()[p])


def _prismatic_of(desc, body_index, ground, j):
    """The forms of a prismatic joint: its bodies' u, its axis, its points' offset."""
    i1, p1 = _point_of(desc, body_index, ground, j.first)
    i2, p2 = _point_of(desc, body_index, ground, j.second)
    u1, u2 = _u_form(i1), _u_form(i2)
    axis = _rotate(*u1, j.axis)
    d = (_comb((1.0, p2[0]), (-1.0, p1[0])), _comb((1.0, p2[1]), (-1.0, p1[1])))
    return u1, u2, axis, d


def _gear_rows(desc: Description, body_index, ground) -> list:
    """The angle rows of the gear pairs and racks (linkdyn.elements.gears says what each
    row is): a body's angle from its carrier's is atan2(u_c x u, u_c . u), a prismatic
    joint's slide its points' offset along its axis."""
    joints = {j.name: j for j in desc.joints}
    out = []
    for spec in desc.gears:
        if getattr(spec, "backlash", 0.0):
            continue                  # a pair with play: contact records instead
        scale, terms, shift = _gears.mesh_terms(spec, joints)
        angles = []
        for kind, what, *rest in terms:
            if kind == "turn":
                carrier, n = rest
                u = _u_form(body_index.get(what, -1))
                uc = _u_form(body_index.get(carrier, -1))
                angles.append((0, n, _cross(uc, u), _dot(uc, u)))
            else:
                _, _, axis, d = _prismatic_of(desc, body_index, ground, joints[what])
                angles.append((1, rest[0], _dot(axis, d), {}))
        out.append(AngleRow(f"{spec.name}.mesh", spec.name, scale, tuple(angles), shift))
    return out


def _cam_rows(desc: Description, body_index, ground) -> list:
    """The cam rows of the cams and followers (linkdyn.elements.cams says what each row
    is): a point's cam-frame coordinates are (u_c . (r - O), u_c x (r - O)), a face's
    normal angle from the cam's is atan2(u_c x n, u_c . n), its distance n . (r - O)."""
    out = []
    for index, spec in enumerate(getattr(desc, "cams", ())):
        if spec.contact is not None:
            continue                  # a force-closed follower: a contact record instead
        kind, cam, point, *rest = _cams.contact_terms(spec)
        ic, O = _point_of(desc, body_index, ground, cam)
        i_f, F = _point_of(desc, body_index, ground, point)
        uc = _u_form(ic)
        diff = (_comb((1.0, F[0]), (-1.0, O[0])), _comb((1.0, F[1]), (-1.0, O[1])))
        if kind == "point":
            angles = ((2, 1.0, _cross(uc, diff), _dot(uc, diff), index),)
        else:
            normal = _rotate(*_u_form(i_f), math.atan2(rest[0][1], rest[0][0]))
            angles = ((1, 1.0, _dot(normal, diff), {}),
                      (3, 1.0, _cross(uc, normal), _dot(uc, normal), index))
        out.append(AngleRow(f"{spec.name}.contact", spec.name, 1.0, angles, absolute=True))
    return out


def _generic_rows(desc: Description, body_index, ground, armatures=()):
    """Rows of prismatic joints, drivers and rotor armatures: [(row name, owner, [(terms, tf,
    law)])], laws."""
    rows, laws = [], []

    def point(ref):
        return _point_of(desc, body_index, ground, ref)

    def prismatic_parts(j):
        return _prismatic_of(desc, body_index, ground, j)

    joints = {j.name: j for j in desc.joints}
    for j in desc.joints:
        if isinstance(j, PrismaticSpec):
            u1, u2, axis, d = prismatic_parts(j)
            rows.append((f"{j.name}.rotation", j.name,
                         [(_cross(_rotate(*u1, j.angle), u2), 0, -1)]))
            rows.append((f"{j.name}.axis", j.name, [(_cross(axis, d), 0, -1)]))
    for drv in desc.drivers:
        law = len(laws)
        laws.append(drv.law)
        if isinstance(drv, AngleDriverSpec):
            j = joints[drv.joint]
            i1 = body_index.get(j.first[0], -1)
            i2 = body_index.get(j.second[0], -1)
            u1, u2 = _u_form(i1), _u_form(i2)
            neg_dot = {k: -v for k, v in _dot(u1, u2).items()}
            rows.append((drv.name, drv.name, [(_cross(u1, u2), 1, law), (neg_dot, 2, law)]))
        elif isinstance(drv, SlideDriverSpec):
            _, _, axis, d = prismatic_parts(joints[drv.joint])
            rows.append((drv.name, drv.name, [(_dot(axis, d), 0, -1), ({(-1, -1): -1.0}, 3, law)]))
        else:
            assert isinstance(drv, CoordinateDriverSpec)
            _, p = point(drv.point)
            lin = p[0] if drv.axis == "x" else p[1]
            terms = {((k, -1) if k >= 0 else (-1, -1)): v for k, v in lin.items()}
            rows.append((drv.name, drv.name, [(terms, 0, -1), ({(-1, -1): -1.0}, 3, law)]))
    for arm in armatures:
        # u_rotor = u2 conj(u1): x row uRx - u1.u2, y row uRy - u1 x u2 (bilinear).
        r = body_index[arm.rotor]
        u1 = _u_form(body_index.get(arm.body1, -1))
        u2 = _u_form(body_index.get(arm.body2, -1))
        for comp, form in ((2, _dot(u1, u2)), (3, _cross(u1, u2))):
            terms = {k: -v for k, v in form.items()}
            terms[(4 * r + comp, -1)] = terms.get((4 * r + comp, -1), 0.0) + 1.0
            rows.append((f"{arm.rotor}.{'x' if comp == 2 else 'y'}_turn", arm.owner,
                         [(terms, 0, -1)]))
    return rows, laws


def number_bodies(desc: Description) -> Numbering:
    """Number the bodies' coordinates and their unit-vector and revolute rows."""
    if not desc.bodies:
        raise ModelError(f"model {desc.name!r} has no bodies")
    user_desc = desc
    # Rotors of motors and flexible joints become bodies, pins and records of their own.
    desc, armatures = _forces.expand(desc)
    body_index = {b.name: i for i, b in enumerate(desc.bodies)}
    nq = 4 * len(desc.bodies)
    mass, q_applied, q0, v0, hold = (np.empty(nq), np.zeros(nq), np.empty(nq), np.empty(nq),
                                     np.zeros(nq, dtype=bool))
    coord_names = []
    for i, b in enumerate(desc.bodies):
        m, jz = b.resolved_mass(), b.resolved_inertia()
        mass[4 * i:4 * i + 4] = (m, m, jz, jz)
        q_applied[4 * i:4 * i + 2] = (m * desc.gravity[0], m * desc.gravity[1])
        q0[4 * i:4 * i + 4] = (*b.position, *b.u)
        v0[4 * i:4 * i + 4] = (*b.velocity, *b.ud)
        hold[4 * i:4 * i + 4] = b.hold
        coord_names += [f"{b.name}.{c}" for c in COORDINATES]
    rows, cols, row_names, owners = [], [], [], []
    unit_body = _unit_rows(desc, body_index, armatures, rows, cols, row_names, owners)
    ground = dict(desc.ground)
    revolute = _revolute_rows(desc, body_index, ground, len(unit_body), rows, cols, row_names,
                              owners)
    # Generic rows (prismatic joints, drivers, armatures): terms and their Jacobian entries.
    generic, laws = _generic_rows(desc, body_index, ground, armatures)

    def family_arrays(slot, hess_slot) -> dict:
        """The unit-vector and revolute rows' arrays, with their slots in Phi_q."""
        rev_body, rev_local, rev_row, rev_entry = revolute
        unit_slot = slot[: 2 * len(unit_body)].reshape(len(unit_body), 2)
        rev_slot = np.where(rev_entry >= 0, slot[np.maximum(rev_entry, 0)], -1).astype(np.intc)
        return dict(unit_row=np.arange(len(unit_body), dtype=np.intc), unit_body=unit_body,
                    unit_slot=unit_slot.ravel(), unit_hslot=hess_slot,
                    rev_body=rev_body.ravel(), rev_local=rev_local.ravel(), rev_row=rev_row,
                    rev_slot=rev_slot.ravel())

    marker_body = np.array([body_index[m.body] for m in desc.markers], dtype=np.intp)
    marker_local = np.array([desc.bodies[body_index[m.body]].local_points()[m.point]
                             for m in desc.markers], dtype=float).reshape(-1, 2)
    return Numbering(
        description=user_desc, model_type=Model, model_args=(), q0=q0, v0=v0, hold=hold,
        mass=mass, q_applied=q_applied, coordinates=coord_names, rows=rows, cols=cols,
        row_names=row_names, owners=owners, nc=len(unit_body) + 2 * len(revolute[2]),
        hdiag=np.stack([4 * unit_body + 2, 4 * unit_body + 3], axis=1).ravel(),
        generic=generic, laws=laws, force_description=desc, body_index=body_index,
        local_of=lambda i, p: desc.bodies[i].local_points()[p], ground=ground,
        marker_body=marker_body, marker_local=marker_local,
        names=dict(bodies=tuple(b.name for b in desc.bodies),
                   joints=tuple(j.name for j in desc.joints),
                   markers=tuple(m.name for m in desc.markers),
                   drivers=tuple(d.name for d in desc.drivers),
                   forces=tuple(f.name for f in desc.forces)),
        family_arrays=family_arrays,
        angle_rows=_gear_rows(desc, body_index, ground) + _cam_rows(desc, body_index, ground))


def _unit_rows(desc, body_index, armatures, rows, cols, row_names, owners) -> np.ndarray:
    """Unit-vector rows: row k for the k-th body that has one (an armature's rotor has its
    two turn rows instead), entries d/dux, d/duy. Returns the bodies, in row order."""
    turned = {body_index[a.rotor] for a in armatures}
    unit_body = np.array([i for i in range(len(desc.bodies)) if i not in turned],
                         dtype=np.intc)
    for k, i in enumerate(unit_body):
        row_names.append(f"{desc.bodies[i].name}.unit")
        owners.append(desc.bodies[i].name)
        rows += [k, k]
        cols += [4 * i + 2, 4 * i + 3]
    return unit_body


def _revolute_rows(desc, body_index, ground, nc, rows, cols, row_names, owners):
    """Revolute rows (x, then y) after the ``nc`` rows made: (bodies, local points, first
    row, index into rows/cols of each entry) per joint."""
    revolutes = [j for j in desc.joints if isinstance(j, RevoluteSpec)]
    # (plain lists, made arrays once: element-wise writes into arrays cost more than the
    # numbering itself, a fixed cost of every compile and of every sensitivity member)
    rev_body, rev_local, rev_row, rev_entry = [], [], [], []
    points = {}         # each body's local points, computed once
    for j in revolutes:
        rev_row.append(nc)
        row_names += [f"{j.name}.x", f"{j.name}.y"]
        owners += [j.name, j.name]
        for bname, pname in (j.first, j.second):
            if bname == GROUND:
                rev_body.append(-1)
                rev_local += list(ground[pname])
                rev_entry += [-1] * 6
                continue
            bi = body_index[bname]
            if bi not in points:
                points[bi] = desc.bodies[bi].local_points()
            rev_body.append(bi)
            rev_local += list(points[bi][pname])
            c, start = 4 * bi, len(rows)
            rows += [nc, nc, nc, nc + 1, nc + 1, nc + 1]
            cols += [c, c + 2, c + 3, c + 1, c + 2, c + 3]
            rev_entry += range(start, start + 6)
        nc += 2
    rev_body = np.array(rev_body, dtype=np.intc).reshape(-1, 2)
    rev_local = np.array(rev_local, dtype=float).reshape(-1, 4)
    rev_row = np.array(rev_row, dtype=np.intc)
    rev_entry = np.array(rev_entry, dtype=np.int64).reshape(-1, 12)
    return rev_body, rev_local, rev_row, rev_entry


def point_arrays(desc: Description, moves) -> list:
    """Per dict of ``moves`` ({(body or "ground", point): (x, y)}), the revolute rows' and
    markers' local-point arrays (``rev_local`` (nrev * 4) and ``marker_local`` (nmarker, 2),
    laid out as :func:`number_bodies` lays them, rotors' pins included) with each point it
    gives at its value and the others zero: with the points' derivatives with respect to a
    parameter, the arrays' derivatives (both are linear in the points). None for a dict
    with a point that enters a generic row (a prismatic joint, a coordinate driver), whose
    coefficients these arrays do not hold. The description is expanded once for all."""
    desc = _forces.expand(desc)[0]
    generic = {tuple(end) for j in (*desc.joints, *desc.drivers)
               for end in ((j.first, j.second) if isinstance(j, PrismaticSpec) else
                           (j.point,) if isinstance(j, CoordinateDriverSpec) else ())}
    ends = [tuple(end) for j in desc.joints if isinstance(j, RevoluteSpec)
            for end in (j.first, j.second)]
    marked = [(m.body, m.point) for m in desc.markers]
    zero = np.zeros(2)
    out = []
    for points in moves:
        if generic.intersection(points):
            out.append(None)
            continue
        out.append((np.array([points.get(e, zero) for e in ends], dtype=float).reshape(-1),
                    np.array([points.get(m, zero) for m in marked],
                             dtype=float).reshape(-1, 2)))
    return out
