"""Where a model's drawn points are over a trajectory: ground points, body points, joint
points and the outlines drawn for bodies, supports, and the polylines of spatial models
(used by the model's sketch, the animations, the HTML pages and the joint accessors)."""

from __future__ import annotations

import numpy as np

from ..elements.bodies import GROUND, BarSpec
from ..elements.gears import pitch_circles
from ..elements.joints import PrismaticSpec, RevoluteSpec

__all__ = ["PointGeometry", "pivots", "shapes_3d", "gear_circles", "cam_outlines"]


class PointGeometry:
    """World positions (m) of a model's points at rows of a trajectory ``q`` (n, nq): ground
    points, body points, joint points and the outlines drawn for bodies."""

    def __init__(self, model, q):
        self.model, self.q = model, q
        desc = model.description
        self.ground = dict(desc.ground)
        self.bodies = {b.name: b for b in desc.bodies}
        self.index = {name: 4 * i for i, name in enumerate(model.body_names)}
        # The described bodies have outlines; the compiler's own (a motor's or flexible
        # joint's "<name>/rotor" and "<name>/flex") ride at their joint's point, which is
        # drawn with the joints.
        self.drawn = [b for b in model.body_names if b in self.bodies]

    def point(self, body, local, rows) -> np.ndarray:
        """(len(rows), 2) world positions of a body's local point."""
        if body == GROUND:
            return np.broadcast_to(np.asarray(local, dtype=float), (len(rows), 2))
        i = self.index[body]
        x, y, ux, uy = (self.q[rows, i + k] for k in range(4))
        sx, sy = local
        return np.column_stack([x + ux * sx - uy * sy, y + uy * sx + ux * sy])

    def ref(self, ref, rows) -> np.ndarray:
        body, name = ref
        if body == GROUND:
            return self.point(GROUND, self.ground[name], rows)
        return self.point(body, self.bodies[body].local_points()[name], rows)

    def outline(self, body, rows) -> np.ndarray:
        """(len(rows), k, 2): the points drawn for a body, in drawing order."""
        spec = self.bodies[body]
        pts = spec.local_points()
        if isinstance(spec, BarSpec):
            order = [pts["a"], pts["b"]]
        elif len(pts) >= 2:
            order = list(pts.values())
            if len(order) > 2:
                order.append(order[0])
        else:
            order = [(0.0, 0.0)] + list(pts.values())
            if len(order) == 1:
                order.append((0.0, 0.0))
        return np.stack([self.point(body, p, rows) for p in order], axis=1)


def pins(model) -> list:
    """The points drawn as a planar model's pins: each revolute joint's first point and
    each revolute joint with clearance's journal (its second point)."""
    desc = model.description
    return ([j.first for j in desc.joints if isinstance(j, RevoluteSpec)]
            + [c.second for c in getattr(desc, "clearances", ()) if c.kind == "revolute"])


def slides(model) -> list:
    """The joints drawn as a planar model's sliders (each with ``name``, ``first`` and
    ``axis``): the prismatic joints, ideal or with clearance."""
    desc = model.description
    return ([j for j in desc.joints if isinstance(j, PrismaticSpec)]
            + [c for c in getattr(desc, "clearances", ()) if c.kind == "prismatic"])


def pivots(model, geo) -> np.ndarray:
    """(k, 2) ground points that joints pin or slide on (drawn as supports; a ground point
    that only places a contact's line is not one)."""
    names = []
    for j in (*model.description.joints, *getattr(model.description, "clearances", ())):
        for body, point in (j.first, j.second):
            if body == GROUND and point not in names:
                names.append(point)
    return np.array([geo.ground[n] for n in names], dtype=float).reshape(-1, 2)


def gear_circles(model, geo, rows) -> list:
    """Per gear of each planar pair and rack (linkdyn.elements.gears.pitch_circles): its
    centres (len(rows), 2), pitch radius and the tips (len(rows), 2) of a spoke from the
    centre along its body's u (fixed for a gear on the ground), which shows it turning."""
    out = []
    for spec in getattr(model.description, "gears", ()):
        for ref, radius in pitch_circles(spec):
            centre = geo.ref(ref, rows)
            base = geo.index.get(ref[0], -1)
            u = (geo.q[rows][:, base + 2:base + 4] if base >= 0
                 else np.tile([1.0, 0.0], (len(rows), 1)))
            tip = centre + radius * u / np.linalg.norm(u, axis=1, keepdims=True)
            out.append((centre, radius, tip))
    return out


def _turned(centre, u, local):
    """(n, k, 2): the points ``local`` (k, 2) of a body frame at ``centre`` (n, 2) whose axis
    is along ``u`` (n, 2)."""
    u = u / np.linalg.norm(u, axis=1, keepdims=True)
    x = centre[:, None, 0] + u[:, None, 0] * local[None, :, 0] - u[:, None, 1] * local[None, :, 1]
    y = centre[:, None, 1] + u[:, None, 1] * local[None, :, 0] + u[:, None, 0] * local[None, :, 1]
    return np.stack([x, y], axis=-1)


def cam_outlines(model, geo, rows) -> list:
    """Polylines (len(rows), k, 2) of each cam and follower (linkdyn.elements.cams): the
    cam's surface, turning with its body, and the roller (a circle) or the flat face (a
    segment as wide as the cam) on the follower."""
    out = []
    for spec in getattr(model.description, "cams", ()):
        local = spec.surface(180)
        reach = float(np.hypot(local[:, 0], local[:, 1]).max())
        local = np.vstack([local, local[:1]])
        i = geo.index[spec.cam[0]]
        out.append(_turned(geo.ref(spec.cam, rows), geo.q[rows][:, i + 2:i + 4], local))
        j = geo.index[spec.follower[0]]
        u = geo.q[rows][:, j + 2:j + 4]
        if spec.shape == "roller":
            ring = np.linspace(0.0, 2.0 * np.pi, 25)
            local = spec.radius * np.column_stack([np.cos(ring), np.sin(ring)])
        elif spec.shape == "flat":
            n = np.asarray(spec.face_normal)
            local = reach * np.array([[-n[1], n[0]], [n[1], -n[0]]])
        else:
            continue
        follower = geo.ref(spec.follower, rows)
        out.append(_turned(follower, u, local))
    return out


def shapes_3d(model, q):
    """What is drawn of a spherical or spatial model over the rows of ``q``: the markers'
    positions (n, nmarkers, 3), one (n, k, 3) polyline per body or link, and the fixed
    points (k, 3) drawn as supports."""
    P = model.marker_positions(q)
    index = {m: i for i, m in enumerate(model.marker_names)}
    if model.dynamic:
        # spatial bodies: each drawn from its centre of mass to its points
        shapes = [model.body_outline(q, b) for b in model.body_names]
        fixed_xyz = np.array([xyz for _, xyz in model.description.ground]).reshape(-1, 3)
    else:
        linkage = model.description
        shapes = []
        for link, members in linkage.links.items():
            pts = [index[j] for j in members if j in index]
            if link != linkage.ground and len(pts) >= 2:
                shapes.append(P[:, pts + [pts[0]] if len(pts) >= 3 else pts])
        fixed_xyz = P[0, [index[j] for j in linkage.links[linkage.ground] if j in index]]
    return P, shapes, fixed_xyz
