"""What :func:`linkdyn.simulate` returns: :class:`SimulationResult`, the trajectories at the
output times with the run's events, contact modes, controller samples and work counters, and
the accessors of forces, energies and reactions computed from them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UnknownNameError, counted, name_list, summary
from .. import _html
from ..compile.model import Model, checked_time
from ..elements.bodies import GROUND
from ..elements.friction import gradient
from ..elements.bushings import BushingSpec, SpatialBushingSpec
from ..elements.gears import BACKLASH_SIDES, tooth_forces
from ..elements.cams import pressure_angle
from ..elements.joints import PrismaticSpec
from .accessors import TrajectoryAccessors, needs_rows, recordable
from ..compile.geometry import PointGeometry

BUSHINGS = (BushingSpec, SpatialBushingSpec)

__all__ = ["SimulationResult", "prismatic_reaction"]


@dataclass(frozen=True)
class SimulationResult(TrajectoryAccessors):
    """Trajectories at the output times.

    Attributes
    ----------
    model : Model
    t : ndarray (n,)
        Output times (s); the last is ``t_end`` unless the run was interrupted.
    recorded : dict or None
        With ``simulate(..., record=Record(...))``: the recorded series by (accessor,
        argument), which the accessors return; ``q``, ``v``, ``lam``, ``z`` and
        ``stick_lam`` are then None (see :mod:`linkdyn.output`).
    q, v : ndarray (n, nq)
        Coordinates and their velocities (output velocities are projected onto the
        velocity constraints unless ``project_output=False``).
    lam : ndarray (n, nc)
        Lagrange multipliers of the constraint rows (``model.constraint_names``).
    stats : dict
        Work counters (``steps``, ``rejected_steps``, ``newton_iterations``,
        ``residual_evaluations``, ``jacobian_evaluations``, ``factorizations``, ...) and
        ``integration_seconds``, the wall time of the integration alone, and
        ``output_seconds``, the time spent on output rows (interpolation, projection and
        the reduction to recorded series) with ``output_rows`` their number; with a controller
        also ``controller_samples``, ``controller_restarts`` and ``controller_seconds``
        (time spent in the controller function).
    status : str
        ``"success"``, ``"event"`` (a terminal event stopped the run: the last row is the
        state at the event) or ``"interrupted"`` (Ctrl-C: the arrays hold what was
        computed).
    events : tuple of linkdyn.events.EventRecord
        The events that happened, in time order (time, name, direction).
    z : ndarray (n, nz)
        Quadratures integrated with the state: the work of each force record and load, then
        each record's coordinate tracked over turns (use ``work``, ``element_work``,
        ``element_coordinate``).
    control_t, control_inputs, control_active : ndarray
        Sample times (m,) of the controller and the inputs held from each (m, ninput), with
        the flags of inputs replacing a servo's target (empty without a controller).
    impacts : tuple of (t, contact, speed)
        Approach speeds (m/s) recorded at the onsets of Lankarani-Nikravesh contacts, by the
        contact's name (they set the contact's damping from then on).
    friction_modes : tuple of (t, contact, mode)
        Every change of mode of a contact with friction ("open", "slide+", "slide-",
        "stick"; see :mod:`linkdyn.friction`), from the start on.
    stick_lam : ndarray (n, ncontact) or None
        Multipliers of the stick rows of the contacts with friction (zero while a contact
        does not stick); ``friction_force(contact)`` turns them into forces.
    """

    model: Model
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    stats: dict
    status: str = "success"
    events: tuple = ()
    z: np.ndarray | None = None
    control_t: np.ndarray | None = None
    control_inputs: np.ndarray | None = None
    control_active: np.ndarray | None = None
    impacts: tuple = ()
    friction_modes: tuple = ()
    stick_lam: np.ndarray | None = None
    _friction_rows: tuple = field(default=(), repr=False, compare=False)
    recorded: dict | None = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __repr__(self) -> str:
        return summary("SimulationResult", self.model.name, self.t, self.status,
                       counted(self.stats.get("steps", 0), "step"),
                       counted(len(self.events), "event"))

    def _repr_html_(self) -> str:
        """The run's summary in a notebook."""
        st = self.stats
        rows = [("status", self.status),
                ("t", f"{self.t[0]:g} .. {self.t[-1]:g} s, {len(self.t)} output rows"
                 if len(self.t) else "no rows"),
                ("work", f"{st.get('steps', 0)} steps, "
                         f"{1e3 * st.get('integration_seconds', 0.0):.1f} ms"),
                ("events", _html.names([e.name for e in self.events]))]
        if self.q is not None and len(self.t):
            rows.append(("energy variation", f"{np.ptp(self.energy):.3e} J"))
            rows.append(("max |Phi|", f"{self.phi_norm.max():.3e}"))
        return _html.table(f"linkdyn simulation of {self.model.name}", rows,
                           self._repr_png_())

    @property
    @needs_rows
    def a(self) -> np.ndarray:
        """Accelerations (n, nq) of the output rows from the equations of motion,
        M a = Q(q, v, t) - Phi_q^T lam, with the forces the run applied at each row."""
        if "a" not in self._cache:
            m, k = self.model, self.model.kernels
            a = np.empty_like(self.v)
            # Phi_q^T lam from the Jacobian's values in its fixed pattern: each column's
            # products summed in pattern order from zero, as the sparse product sums them
            # (the same numbers), without making a sparse matrix a row
            cols, rows = m.phiq_colind, m.phiq_rowind
            for i, state in self._row_states():
                q, v, t = self.q[i], self.v[i], self.t[i]
                reaction = np.bincount(cols, k.phi_q_values(q, t) * self.lam[i][rows],
                                       minlength=m.nq)
                a[i] = (k.force(q, v, t, state=state) - reaction
                        - self._stick_force(i, state)) / m.mass
            self._cache["a"] = a
        return self._cache["a"]

    @property
    @recordable
    def kinetic_energy(self) -> np.ndarray:
        return 0.5 * np.sum(self.model.mass * self.v**2, axis=1)

    @property
    @recordable
    def potential_energy(self) -> np.ndarray:
        """Potential energy of gravity (zero at y = 0) plus the energy stored in springs (J)."""
        # Row by row alike whatever the number of rows (a matrix product is not: BLAS
        # blocks by shape), so that recorded series equal whole-row ones bit for bit.
        return -np.sum(self.q * self.model.kernels.arrays["q_applied"], axis=1) + \
            self._elements()[2]

    @property
    @recordable
    def energy(self) -> np.ndarray:
        """Total mechanical energy (J) at each output time: kinetic, gravity and springs.
        ``energy - energy[0]`` equals ``work`` to the integrator's tolerance."""
        return self.kinetic_energy + self.potential_energy

    @property
    @recordable
    def work(self) -> np.ndarray:
        """Work (J) done on the mechanism since t0 by everything but gravity and the
        springs' stored energy: the force elements (dampers, motors, servos, loads, moving
        free lengths and rest angles, :attr:`force_work`) and the drivers
        (:attr:`driver_work`). ``energy - energy[0]`` equals it to the tolerance."""
        return self.force_work + self.driver_work

    @property
    @recordable
    def force_work(self) -> np.ndarray:
        """Work (J) done since t0 by the force elements alone (what ``work`` was before the
        drivers' work joined it)."""
        info = self.model.force_info
        return self._z()[:, :info["nrec"] + info["nload"]].sum(axis=1)

    @property
    @recordable
    def driver_work(self) -> np.ndarray:
        """Work (J) done since t0 by the drivers (the rows that depend on time) on the
        mechanism, the integral of lam^T Phi_t; zero for a model without drivers."""
        index = self.model.kernels.driver_work_index
        if index < 0:
            return np.zeros(self.t.shape[0])
        return self._z()[:, index].copy()

    def swinging_at(self, t) -> tuple:
        """The contacts that were swinging (:mod:`linkdyn.contacts`) at time ``t`` of this
        run: what ``simulate(..., swinging=...)`` needs to continue from a state at t."""
        t = checked_time(t, "swinging_at: t")
        out = set()
        for when, name, mode in self.friction_modes:
            if when > t:
                break
            if mode == "swing":
                out.add(name)
            elif mode == "clear":
                out.discard(name)
        return tuple(sorted(out))

    def _stick_force(self, i, state):
        """Generalised force of the stick rows at row i: -sum lam_k grad s_T,k."""
        out = np.zeros(self.model.nq)
        if self.stick_lam is None:
            return out
        for k, f in enumerate(self.model.force_info["frictions"]):
            lam = self.stick_lam[i, k]
            if lam != 0.0:
                out -= lam * gradient(state, f[1], self.q[i], self.v[i])[0]
        return out

    @needs_rows
    def friction_force(self, contact: str) -> np.ndarray:
        """Friction force (N) on the circle of ``contact`` along the line's direction, per
        output row: -mu F_N sign(v_T) while it slides, the stick row's force while it
        sticks, 0 while open (see :mod:`linkdyn.friction`). For a joint friction
        (:mod:`linkdyn.elements.joint_friction`), its torque (N m) or force (N) along the
        joint's coordinate."""
        frictions = self.model.force_info["frictions"]
        names = [f[0] for f in frictions]
        if contact not in names:
            raise UnknownNameError(f"model {self.model.name!r} has no contact {contact!r} with "
                                   f"friction nor joint friction of that name (contacts with "
                                   f"friction and joint frictions: {name_list(names)})")
        k = names.index(contact)
        rec = self._elements()[0][:, frictions[k][1], 2]
        return rec - (self.stick_lam[:, k] if self.stick_lam is not None else 0.0)

    def _z(self):
        n = self.t.shape[0]
        return self.z if self.z is not None else np.zeros((n, 0))

    def _element(self, name):
        return self.model.force_element_entries(name)

    @recordable
    def element_work(self, name: str) -> np.ndarray:
        """Work (J) done by force element ``name`` since t0 (its non-conservative part)."""
        recs, loads = self._element(name)
        nrec = self.model.force_info["nrec"]
        cols = list(recs) + [nrec + i for i in loads]
        return self._z()[:, cols].sum(axis=1)

    @recordable
    def element_force(self, name: str) -> np.ndarray:
        """What force element ``name`` applies: for elements along a coordinate (n,), the
        force or torque f along it (N or N m; a spring's f is minus its tension); for
        ``add_force`` loads (n, 2) in a planar model, (n, 3) in a spatial one, the global
        force (N); for ``add_torque`` of a spatial model (n, 3), the global torque (N m)."""
        recs, loads = self._element(name)
        rec, load, _ = self._elements()
        return rec[:, recs[0], 2] if recs else load[:, loads[0]]

    @recordable
    def element_coordinate(self, name: str) -> np.ndarray:
        """The coordinate (n,) an element acts along: a spring's length (m), a joint's
        relative angle (rad, continuous over turns) or slide (m), a body's angle."""
        recs, _ = self._element(name)
        if not recs:
            raise UnknownNameError(f"force element {name!r} is a point load: it has no coordinate")
        return self._elements()[0][:, recs[0], 0]

    def _row_states(self):
        """(row, state) for each output row: a run state with the force elements' branches
        (tracked angles), the controller inputs held and the contact impact speeds recorded
        at that row, as the run had them."""
        k = self.model.kernels
        info = self.model.force_info
        nrec, nload = info["nrec"], info["nload"]
        state = k.run_state()
        z = self._z()
        tracked = z[:, nrec + nload:2 * nrec + nload] if z.shape[1] else None
        sample = (np.searchsorted(self.control_t, self.t, side="left") - 1
                  if self.control_t is not None and len(self.control_t) else None)
        impacts, next_impact = sorted(self.impacts), 0
        record_of = {name: r for r, name, _ in info["contacts"]}
        changes, next_change = self._friction_rows, 0
        for i in range(self.t.shape[0]):
            # Sliding directions of contacts with friction from the row they applied to.
            while next_change < len(changes) and changes[next_change][0] <= i:
                _, what, r, value = changes[next_change]
                (state.slip if what == "slip" else state.gate)[r] = value
                next_change += 1
            # Impact speeds recorded at onsets before this row (a row at the event time was
            # written before the event was handled).
            while next_impact < len(impacts) and impacts[next_impact][0] < self.t[i]:
                _, contact, speed = impacts[next_impact]
                state.impact[record_of[contact]] = speed
                next_impact += 1
            if tracked is not None:
                state.angle_ref[:nrec] = tracked[i]
            if sample is not None and sample[i] >= 0:
                state.inputs[:k.ninput] = self.control_inputs[sample[i]]
                state.active[:k.ninput] = self.control_active[sample[i]]
            yield i, state

    def _elements(self):
        """Per row: records (n, nrec, 3) of (s, s', f), loads (n, nload, 2 or 3), spring energy
        (n,), each evaluated on the branch the run tracked and with the inputs held then."""
        if "elements" in self._cache:
            return self._cache["elements"]
        k = self.model.kernels
        info = self.model.force_info
        nrec, nload, n = info["nrec"], info["nload"], self.t.shape[0]
        rec = np.zeros((n, nrec, 3))
        load = np.zeros((n, nload, info.get("load_dim", 2)))
        spring = np.zeros(n)
        if nrec + nload:
            for i, state in self._row_states():
                rec[i], load[i] = k.force_values(self.q[i], self.v[i], self.t[i], state)
                spring[i] = (k.potential_energy(self.q[i], self.t[i], state)
                             + self.q[i] @ k.arrays["q_applied"])
        self._cache["elements"] = (rec, load, spring)
        return self._cache["elements"]

    def _norms(self):
        if "norms" not in self._cache:
            self._cache["norms"] = np.array(
                [self.model.constraint_norms(q, v, t) for t, q, v in zip(self.t, self.q, self.v)]
            ).reshape(-1, 2)
        return self._cache["norms"]

    @property
    @recordable
    def phi_norm(self) -> np.ndarray:
        """``|Phi(q, t)|`` at each output time."""
        return self._norms()[:, 0]

    @property
    @recordable
    def phid_norm(self) -> np.ndarray:
        """``|Phi_q v + Phi_t|`` at each output time."""
        return self._norms()[:, 1]

    @recordable
    def driver_effort(self, driver: str) -> np.ndarray:
        """What driver ``driver`` applies (n,): for an angle driver the torque (N m) on the
        joint's second body (the first receives the opposite), for a slide driver the force
        (N) along the axis on the second body, for a coordinate driver the force (N) along
        its axis on the body: ``-lam`` of the driver's row; for a spatial distance driver the
        force (N) along the distance, positive pushing its points apart."""
        if driver not in self.model.driver_names:
            raise UnknownNameError(f"model {self.model.name!r} has no driver {driver!r} (drivers: "
                                   f"{name_list(self.model.driver_names)})")
        return (-self.lam[:, self.model.constraint_names.index(driver)] *
                self.model.driver_effort_scale(driver, self.t))

    @recordable
    def bushing_force(self, name: str) -> np.ndarray:
        """The components (n, 3) planar or (n, 6) spatial of bushing ``name``'s force on its
        second body: along its frame's axes (N) and about them (N m), in the order of
        :data:`linkdyn.elements.bushings.COMPONENTS`."""
        bushings = [f.name for f in self.model.description.forces if isinstance(f, BUSHINGS)]
        if name not in bushings:
            raise UnknownNameError(f"{name!r} is not a bushing of model {self.model.name!r} "
                                   f"(bushings: {name_list(bushings)})")
        recs, _ = self._element(name)
        return self._elements()[0][:, recs, 2]

    @recordable
    def stop_force(self, stop: str) -> np.ndarray:
        """The force (N) or torque (N m) of joint stop ``stop`` along its joint's coordinate
        (n,): positive where the lower stop pushes the coordinate up, negative where the
        upper one pushes it down (:mod:`linkdyn.elements.stops`)."""
        specs = {s.name: s for s in getattr(self.model.description, "stops", ())}
        if stop not in specs:
            raise UnknownNameError(f"unknown joint stop {stop!r} (joint stops: "
                                   f"{name_list(specs)})")
        rec = self._elements()[0]
        out = np.zeros(len(self.t))
        for side, sign in (("lower", 1.0), ("upper", -1.0)):
            if getattr(specs[stop], side) is not None:
                out += sign * rec[:, self._element(f"{stop}/{side}")[0][0], 2]
        return out

    @needs_rows
    def clearance_force(self, joint: str) -> np.ndarray:
        """The contact force (n, 2) planar or (n, 3) spatial, N, global components, that
        joint ``joint`` with clearance exerts on its first body (the bearing, socket or
        guide; the second body receives the opposite), summed over its contacts: zero in
        free flight (:mod:`linkdyn.elements.clearance`)."""
        specs = {c.name: c for c in getattr(self.model.description, "clearances", ())}
        if joint not in specs:
            raise UnknownNameError(f"model {self.model.name!r} has no joint with clearance "
                                   f"{joint!r} (joints with clearance: {name_list(specs)})")
        spec, model = specs[joint], self.model
        dim = model.marker_dimension
        # The force on the second body along s is f grad s over its position coordinates;
        # the first body receives the opposite.
        body = spec.second[0] if spec.second[0] != GROUND else spec.first[0]
        sign = -1.0 if spec.second[0] != GROUND else 1.0
        start = model.body_start(model.body_names.index(body))
        recs = [self._element(c)[0][0] for c in spec.contacts()]
        forces = self._elements()[0]
        out = np.zeros((len(self.t), dim))
        for i, state in self._row_states():
            for r in recs:
                if forces[i, r, 2] != 0.0:
                    grad = gradient(state, r, self.q[i], self.v[i])[0]
                    out[i] += sign * forces[i, r, 2] * grad[start:start + dim]
        return out

    def _mesh(self, pair: str) -> dict:
        specs = {g.name: g for g in getattr(self.model.description, "gears", ())}
        if pair not in specs:
            raise UnknownNameError(f"unknown gear pair {pair!r} (gear pairs and racks: "
                                   f"{name_list(specs)})")
        spec = specs[pair]
        if getattr(spec, "backlash", 0.0):
            # the exact pair's multiplier is minus the net force of the two flanks'
            # contacts along the mesh arc (each record's force carries its sense)
            forces = self._elements()[0]
            lower, upper = (self._element(f"{pair}/{side}")[0][0] for side in BACKLASH_SIDES)
            lam = -(forces[:, lower, 2] + forces[:, upper, 2])
        else:
            lam = self.lam[:, self.model.constraint_names.index(f"{pair}.mesh")]
        return tooth_forces(spec, lam)

    def _cam(self, name: str):
        specs = {c.name: c for c in getattr(self.model.description, "cams", ())}
        if name not in specs:
            raise UnknownNameError(f"unknown cam follower {name!r} (cam followers: "
                                   f"{name_list(specs)})")
        spec = specs[name]
        if spec.contact is not None:
            return spec, None
        return spec, self.model.constraint_names.index(f"{name}.contact")

    @recordable
    def cam_force(self, name: str) -> np.ndarray:
        """The normal contact force (n,) in N between the cam and follower of pair
        ``name``: positive where the follower presses on the cam; an exact pair's is
        negative where it holds the follower on (a grooved cam; a follower held by a spring
        would lift off there), a force-closed follower's zero while it is off the cam; see
        :mod:`linkdyn.elements.cams`."""
        spec, row = self._cam(name)
        if row is None:
            return self._elements()[0][:, self._element(name)[0][0], 2].copy()
        return -self.lam[:, row]

    def _cam_normal(self, spec, row, start) -> np.ndarray:
        """The contact normal (n, 2) on the follower: its row's (or record's) gradient in
        the follower's position."""
        if row is not None:
            return np.array([self.model.phi_q(q, t)[row, start:start + 2].toarray().ravel()
                             for q, t in zip(self.q, self.t)]).reshape(-1, 2)
        r = self._element(spec.name)[0][0]
        out = np.zeros((len(self.t), 2))
        for i, state in self._row_states():
            out[i] = gradient(state, r, self.q[i], self.v[i])[0][start:start + 2]
        return out

    @recordable
    def cam_pressure_angle(self, name: str) -> np.ndarray:
        """The pressure angle (n,) in rad of pair ``name``: from the line along which the
        guide moves the follower's point (a translating follower's axis, or perpendicular
        to an oscillating arm) to the contact normal, in [-pi/2, pi/2]."""
        spec, row = self._cam(name)
        model = self.model
        joint = {j.name: j for j in model.description.joints}[spec.guide]
        rows = np.arange(len(self.t))
        geo = PointGeometry(model, self.q)
        point = geo.ref(spec.follower, rows)
        start = model.body_start(model.body_names.index(spec.follower[0]))
        normal = self._cam_normal(spec, row, start)
        if isinstance(joint, PrismaticSpec):
            base = np.zeros(len(rows))
            if joint.first[0] != GROUND:
                i = model.body_start(model.body_names.index(joint.first[0]))
                base = np.arctan2(self.q[:, i + 3], self.q[:, i + 2])
            motion = np.column_stack([np.cos(base + joint.axis), np.sin(base + joint.axis)])
        else:
            arm = point - geo.ref(joint.first, rows)
            motion = np.column_stack([-arm[:, 1], arm[:, 0]])
        return pressure_angle(normal, motion)

    @recordable
    def gear_force(self, pair: str) -> np.ndarray:
        """The tooth force (n, 3) in N of gear pair or rack ``pair``: tangential (signed:
        the first gear receives the torque ``-r1`` times it), radial and normal (from the
        pressure angle); see :mod:`linkdyn.elements.gears`."""
        f = self._mesh(pair)
        if "tangential" not in f:
            raise UnknownNameError(f"{pair!r} is a joint coupling, not a gear pair: see "
                                   "coupling_force")
        return np.column_stack([f["tangential"], f["radial"], f["normal"]])

    @recordable
    def coupling_force(self, coupling: str) -> np.ndarray:
        """The generalised forces (n, 2) joint coupling ``coupling`` applies to its first and
        second joints (N along a prismatic joint's axis, N m about a revolute one's, each on
        the joint's first body, in the sense its position grows): ``-lam`` and ``k lam`` of
        its multiplier; see :mod:`linkdyn.elements.gears`."""
        f = self._mesh(coupling)
        if "first" not in f:
            raise UnknownNameError(f"{coupling!r} is a gear pair, not a joint coupling: see "
                                   "gear_force")
        return np.column_stack([f["first"], f["second"]])

    @recordable
    def gear_torques(self, pair: str) -> np.ndarray:
        """The torques (n, 2) in N m the mesh of ``pair`` puts on its gears about their
        centres (relative to the carrier); for a rack, the pinion's torque and the force (N)
        on the rack along its joint's axis."""
        f = self._mesh(pair)
        if "torque1" not in f:
            raise UnknownNameError(f"{pair!r} is a joint coupling, not a gear pair: see "
                                   "coupling_force")
        return np.column_stack([f["torque1"], f.get("torque2", f.get("rack_force"))])

    @recordable
    def joint_force(self, joint: str) -> np.ndarray:
        """Force (n, 2) in N that ``joint`` exerts on its first body (the second body
        receives the opposite). A revolute joint's acts at the joint point: ``-lam`` of its x
        and y rows. A prismatic joint's is its constraint force, normal to the axis (a slide
        driver's force along the axis is ``driver_effort``); with it goes the moment
        ``joint_moment``. Spatial models: (n, 3), the force of the joint's rows on its first
        body (``SpatialModel.joint_reaction``)."""
        spec = self.model.joint_spec(joint)
        if self.model.space == "spatial":
            return self.model.joint_reaction(self.q, self.lam, self.t, joint)[0]
        if isinstance(spec, PrismaticSpec):
            return self._prismatic(spec)[0]
        row = self.model.constraint_names.index(f"{joint}.x")
        return -self.lam[:, row:row + 2]

    @recordable
    def joint_moment(self, joint: str) -> np.ndarray:
        """Moment (n,) in N m that ``joint`` exerts on its first body about the joint's first
        point (counter-clockwise positive; the second body receives the opposite force and
        moment about the same point): what a prismatic joint's rotation and axis rows apply
        besides ``joint_force``; zero for a revolute joint."""
        spec = self.model.joint_spec(joint)
        if isinstance(spec, PrismaticSpec):
            return self._prismatic(spec)[1]
        if self.model.space == "spatial":
            return self.model.joint_reaction(self.q, self.lam, self.t, joint)[1]
        return np.zeros(len(self.t))

    def _prismatic(self, spec):
        """Force and moment of a prismatic joint on its first body at every output row."""
        point = PointGeometry(self.model, self.q).ref(spec.first, np.arange(len(self.t)))
        force = np.empty((len(self.t), 2))
        moment = np.empty(len(self.t))
        for k in range(len(self.t)):
            force[k], moment[k] = prismatic_reaction(self.model, spec, self.q[k],
                                                     float(self.t[k]), self.lam[k], point[k])
        return force, moment


def prismatic_reaction(model, spec, q, t, lam, point) -> tuple[np.ndarray, float]:
    """Force (2,) and moment (about the joint's first point, at ``point``) that prismatic
    joint ``spec`` exerts on its first body at one state, from the generalised constraint
    forces -Phi_q^T lam of its two rows on one of its bodies."""
    rows = [model.constraint_names.index(f"{spec.name}.rotation"),
            model.constraint_names.index(f"{spec.name}.axis")]
    # The forces on the second body, negated; on the first when the second is ground.
    body, sign = ((spec.second[0], -1.0) if spec.second[0] != GROUND
                  else (spec.first[0], 1.0))
    i = 4 * model.body_names.index(body)
    J = model.phi_q(q, t)[rows][:, i:i + 4].toarray()
    g = -J.T @ lam[rows]
    ux, uy = q[i + 2], q[i + 3]
    # A moment about the centre of mass does work on u through du = (-uy, ux) dtheta.
    m_centre = -g[2] * uy + g[3] * ux
    r = q[i:i + 2] - point
    return sign * g[:2], float(sign * (m_centre + r[0] * g[1] - r[1] * g[0]))
