"""The frozen :class:`Model`: a compiled description's arrays, its kernels and the names of
its coordinates, rows and elements. It is made by :func:`linkdyn.compile.compiler.compile_model`
and never changes; nothing in it looks anything up by name on a solver's hot path.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from .. import _html
from .._checks import MAX_COUNT, checked_path
from .._kernels import Kernels
from ..elements.description import Description
from ..elements.description import save as save_description
from ..elements.joints import AngleDriverSpec, PrismaticSpec
from ..elements.run_defaults import as_mapping
from ..errors import (ArgumentError, ModelError, OutOfMemoryError, UnknownNameError, counted,
                      name_list)

__all__ = ["Model", "COORDINATES", "kinematic_only", "require_dynamic", "check_output_size",
           "check_model_size", "check_normal_fill", "checked_array", "checked_coordinates",
           "checked_count", "checked_positive", "checked_time"]

#: Names of a body's four coordinates, in storage order.
COORDINATES = ("x", "y", "ux", "uy")


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class Model:
    """A compiled, immutable planar multibody model.

    Attributes
    ----------
    description : Description
        The validated description it was compiled from (``Model`` equality compares these).
    body_names, joint_names, marker_names : tuple of str
    nq, nc : int
        Number of coordinates (4 per body) and of constraint rows.
    coordinate_names : tuple of str
        ``"<body>.<x|y|ux|uy>"`` for each coordinate.
    constraint_names : tuple of str
        ``"<body>.unit"`` for unit-vector rows, ``"<joint>.x"`` / ``"<joint>.y"`` for
        revolute rows, ``"<joint>.rotation"`` / ``"<joint>.axis"`` for prismatic rows and
        ``"<driver>"`` for driver rows.
    mass : ndarray (nq,)
        Diagonal of the constant mass matrix, diag(m, m, Jz, Jz) per body.
    q0, v0 : ndarray (nq,)
        Initial guesses from the description (not yet consistent).
    hold : ndarray of bool (nq,)
        Coordinates the initial projection keeps fixed (bodies marked ``hold``).
    kernels : linkdyn._kernels.Kernels
        The compiled kernels (Phi, Phi_q values, gamma, Q, energies).
    """

    def __init__(self, description: Description, arrays: dict, names: dict, compiler):
        self.description = description
        #: the function that compiled it (a model travels as its description and this)
        self._compiler = compiler
        self.name = description.name
        self.body_names = names["bodies"]
        self.joint_names = names["joints"]
        self.marker_names = names["markers"]
        self.driver_names = names["drivers"]
        self.force_names = names["forces"]
        #: element name -> (record indices, load indices) in the force kernels' arrays;
        #: inputs: names of the elements a controller can drive, in input order.
        self.force_info = names["force_info"]
        self.coordinate_names = names["coordinates"]
        self.constraint_names = names["constraints"]
        self.constraint_owner = names["owners"]
        self.nbody = len(self.body_names)
        self.nq = len(arrays["mass"])
        self.nc = int(arrays["nc"])
        self.kernels = Kernels(arrays)
        self.mass = self.kernels.arrays["mass"]
        self.phiq_colptr = self.kernels.arrays["phiq_colptr"]
        self.phiq_rowind = self.kernels.arrays["phiq_rowind"]
        #: the column of each value of Phi_q's fixed (CSC) pattern, beside phiq_rowind
        self.phiq_colind = _readonly(np.repeat(np.arange(self.nq, dtype=np.intc),
                                               np.diff(self.phiq_colptr)))
        self.q0 = _readonly(arrays["q0"])
        self.v0 = _readonly(arrays["v0"])
        self.hold = _readonly(arrays["hold"])
        self.marker_body = _readonly(arrays["marker_body"])
        self.marker_local = _readonly(arrays["marker_local"])

    @functools.cached_property
    def phiq_row_entries(self) -> int:
        """The most entries a row of Phi_q's pattern has."""
        return int(np.bincount(self.phiq_rowind, minlength=1).max())

    @functools.cached_property
    def phiq_column_entries(self) -> int:
        """The most entries a column of Phi_q's pattern has: the rows on its densest
        coordinate, which fill a dense block of that size in Phi_q M^-1 Phi_q^T."""
        return int(np.bincount(self.phiq_colind, minlength=1).max())

    @functools.cached_property
    def body_position_columns(self) -> np.ndarray:
        """(nbody, marker_dimension): the coordinates of each body's centre in q."""
        starts = np.array([self.body_start(i) for i in range(self.nbody)], dtype=np.intp)
        return starts.reshape(-1, 1) + np.arange(self.marker_dimension)

    @functools.cached_property
    def body_size(self) -> float:
        """The size of the mechanism (m): its bodies' sizes end to end, each twice the
        largest distance of its points from its centre (a bar's length). What a start may
        move a body without a warning (:func:`linkdyn.consistent_state`)."""
        size = 0.0
        for body in getattr(self.description, "bodies", ()):
            reach = [math.hypot(*p) for _, p in body.points]
            size += 2.0 * max(reach + [0.5 * (getattr(body, "length", None) or 0.0)])
        return size

    @property
    def run_defaults(self):
        """The model's own run settings (a read-only mapping: ``t_end``, ``redundant``,
        ``at_limit``), which the ``linkdyn`` command uses where its options are not given
        (:mod:`linkdyn.elements.run_defaults`); empty for most models."""
        return as_mapping(self.description.run_defaults)

    # -- identity ------------------------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Model):
            return NotImplemented
        return self.description == other.description

    __hash__ = None

    def __reduce__(self):
        # A model travels as its description and is compiled again where it is unpickled
        # (the compiled kernels hold pointers that cannot cross processes).
        return (self._compiler, (self.description,))

    def __repr__(self):
        return (f"<linkdyn.{type(self).__name__} {self.name!r}: "
                f"{counted(self.nbody, 'body', 'bodies')}, "
                f"{counted(len(self.joint_names), 'joint')}, {self._gear_count()}"
                f"{counted(self.nq, 'coordinate')}, {counted(self.nc, 'constraint')}>")

    def _gear_count(self) -> str:
        n = len(getattr(self.description, "gears", ()))
        return f"{counted(n, 'gear pair')}, " if n else ""

    def _repr_html_(self) -> str:
        """The model's summary in a notebook."""
        contacts = [name for _, name, _ in self.force_info.get("contacts", ())]
        return _html.table(f"linkdyn model {self.name} ({self.space})", [
            ("bodies", _html.names(self.body_names)),
            ("joints", _html.names(self.joint_names)),
            ("drivers", _html.names(self.driver_names)),
            ("force elements", _html.names(self.force_names)),
            ("contacts", _html.names(contacts)),
            ("gear pairs", _html.names([g.name for g in getattr(self.description, "gears",
                                                                ())])),
            ("joint stops", _html.names([g.name for g in getattr(self.description, "stops",
                                                                 ())])),
            ("joints with clearance", _html.names(
                [g.name for g in getattr(self.description, "clearances", ())])),
            ("joint frictions", _html.names(
                [g.name for g in getattr(self.description, "joint_frictions", ())])),
            ("markers", _html.names(self.marker_names)),
            ("coordinates, constraints", f"{self.nq}, {self.nc}"),
            ("kinematic only", "yes" if (not self.dynamic or getattr(
                self.description, "kinematic", False)) else "no"),
        ], self._repr_png_())

    def _repr_png_(self) -> bytes:
        """A sketch of the model at its initial guesses (notebooks)."""
        from .sketch import sketch_png

        return sketch_png(self)

    #: "planar" for models of bodies in the plane; "spatial" for spatial bodies
    #: (:mod:`linkdyn.compile.spatial`); the natural-coordinate linkages of
    #: :mod:`linkdyn.natural` are "spherical" or "spatial" (kinematics only).
    space = "planar"
    #: Whether the model has masses and forces (False: a kinematic-only linkage).
    dynamic = True
    #: Components of a marker's position: 2 in the plane, 3 in space.
    marker_dimension = 2
    #: Coordinates per body.
    body_stride = 4
    #: Whether the BDF's sparse LU orders columns for partial pivoting (COLAMD) rather than
    #: the symmetric pattern (AMD): see ld_bdf.c, reorder().
    column_ordering = False

    def body_start(self, index: int) -> int:
        """The first coordinate of body ``index`` (its centre of mass's x)."""
        return self.body_stride * index

    @property
    def driver_laws(self) -> tuple:
        """(driver name, Law) of each driver, in row order."""
        return tuple((d.name, d.law) for d in self.description.drivers)

    def driver_effort_scale(self, driver: str, t) -> np.ndarray:
        """The factor (per time in ``t``) that turns ``-lam`` of driver ``driver``'s row into
        its effort, the generalised force along the driven coordinate: 1 where the row is
        the coordinate minus its law (planar drivers)."""
        return np.ones_like(checked_array("t", t))

    @property
    def input_turns(self) -> bool:
        """Whether the model has one driver and it turns a joint (an angle driver)."""
        drivers = self.description.drivers
        return len(drivers) == 1 and isinstance(drivers[0], AngleDriverSpec)

    def orientation_cosines(self, q, t: float = 0.0, state=None) -> np.ndarray:
        """Rows written as a sine (an angle driver: sin(angle - f); a prismatic joint's
        relative orientation) are also met half a turn away; their cosines, one per such row
        (angle drivers, then prismatic joints), are +1 at the intended configuration and -1
        at the flipped one. ``state``: a run's state holding Python-function law values."""
        q = checked_coordinates(self, q)
        t = checked_time(t)
        index = {b: i for i, b in enumerate(self.body_names)}

        def u(ref_body):
            i = index.get(ref_body)
            return np.array([1.0, 0.0]) if i is None else q[4 * i + 2:4 * i + 4]

        joints = {j.name: j for j in self.description.joints}
        out = []
        for k, drv in enumerate(self.description.drivers):
            if not isinstance(drv, AngleDriverSpec):
                continue
            j = joints[drv.joint]
            u1, u2 = u(j.first[0]), u(j.second[0])
            f = (state.law_values[3 * k] if drv.law.is_function and state is not None
                 else drv.law(float(t))[0])
            dot, cross = u1 @ u2, u1[0] * u2[1] - u1[1] * u2[0]
            out.append(dot * math.cos(f) + cross * math.sin(f))
        for j in self.description.joints:
            if isinstance(j, PrismaticSpec):
                u1, u2 = u(j.first[0]), u(j.second[0])
                c, s_ = math.cos(j.angle), math.sin(j.angle)
                out.append((c * u1[0] - s_ * u1[1]) * u2[0] + (s_ * u1[0] + c * u1[1]) * u2[1])
        return np.array(out)

    @property
    def nominal_dof(self) -> int:
        """nq - nc: the degrees of freedom if every constraint row is independent."""
        return self.nq - self.nc

    # -- evaluation (Python edge of the kernels) -----------------------------------------
    def phi(self, q, t: float = 0.0, state=None) -> np.ndarray:
        """Constraint residuals Phi(q, t), shape (nc,). ``state``: a run's
        :class:`linkdyn._kernels.RunState` (values of laws given as Python functions), by
        default the model's own."""
        return self.kernels.phi(q, checked_time(t), state=state)

    def phi_q(self, q, t: float = 0.0, state=None) -> sp.csc_matrix:
        """The constraint Jacobian as a SciPy CSC matrix (nc x nq) in the fixed pattern."""
        vals = self.kernels.phi_q_values(q, checked_time(t), state=state)
        return sp.csc_matrix((vals, self.phiq_rowind, self.phiq_colptr),
                             shape=(self.nc, self.nq))

    def phi_t(self, q, t: float = 0.0, state=None) -> np.ndarray:
        return self.kernels.phi_t(q, checked_time(t), state=state)

    def gamma(self, q, v, t: float = 0.0) -> np.ndarray:
        """gamma = Phi_q qdd: -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt, shape (nc,)."""
        return self.kernels.gamma(q, v, checked_time(t))

    def force(self, q, v, t: float = 0.0) -> np.ndarray:
        """Generalised applied forces Q(q, v, t), shape (nq,)."""
        return self.kernels.force(q, v, checked_time(t))

    def _nq_by_nq(self, vals, pattern: str) -> sp.csc_matrix:
        a = self.kernels.arrays
        return sp.csc_matrix((vals, a[f"{pattern}_rowind"], a[f"{pattern}_colptr"]),
                             shape=(self.nq, self.nq))

    def force_q(self, q, v, t: float = 0.0) -> sp.csc_matrix:
        """dQ/dq (nq x nq, CSC)."""
        return self._nq_by_nq(self.kernels.force_q_values(q, v, checked_time(t)), "fq")

    def force_v(self, q, v, t: float = 0.0) -> sp.csc_matrix:
        """dQ/dv (nq x nq, CSC)."""
        return self._nq_by_nq(self.kernels.force_v_values(q, v, checked_time(t)), "fv")

    def constraint_hessian(self, q, lam, t: float = 0.0) -> sp.csc_matrix:
        """d/dq (Phi_q^T lam) (nq x nq, CSC): constraint second derivatives weighted by the
        multipliers ``lam`` (nc,)."""
        return self._nq_by_nq(self.kernels.phi_qq_lam_values(q, lam, checked_time(t)),
                              "hess")

    def energy(self, q, v, t: float = 0.0) -> tuple[float, float]:
        """(kinetic, potential) energy in J: the potential of gravity (zero at y = 0) plus
        the energy stored in springs at time t (angles on the branch nearest to the initial
        guesses' relative angles)."""
        t = checked_time(t)
        return self.kernels.kinetic_energy(v), self.kernels.potential_energy(q, t)

    def constraint_norms(self, q, v, t: float = 0.0, state=None) -> tuple[float, float]:
        """Euclidean norms of the position and velocity constraint violations:
        ``|Phi(q, t)|`` and ``|Phi_q v + Phi_t|``."""
        return self.kernels.constraint_norms(q, v, checked_time(t), state=state)

    def joint_spec(self, joint: str):
        """The description's record of ``joint`` (UnknownNameError listing the joints)."""
        joints = self.description.joints     # a linkage's are a mapping already
        specs = joints if isinstance(joints, Mapping) else {j.name: j for j in joints}
        if not isinstance(joint, str) or joint not in specs:
            raise UnknownNameError(f"model {self.name!r} has no joint {joint!r} (joints: "
                                   f"{name_list(specs)})")
        return specs[joint]

    def force_element_entries(self, name: str) -> tuple:
        """(record indices, load indices) of force element ``name`` in the force kernels'
        arrays (``force_info["elements"]``), or UnknownNameError naming it."""
        elements = self.force_info["elements"]
        if not isinstance(name, str) or name not in elements:
            raise UnknownNameError(f"model {self.name!r} has no force element {name!r} "
                                   f"(force elements: {name_list(self.force_names)})")
        return elements[name]

    def marker_index(self, name: str) -> int:
        try:
            return self.marker_names.index(name)
        except ValueError:
            raise UnknownNameError(f"model {self.name!r} has no marker {name!r} (markers: "
                                   f"{name_list(self.marker_names)})") from None

    def marker_positions(self, q) -> np.ndarray:
        """Global positions of all markers: q of shape (..., nq) -> (..., nmarkers, 2)."""
        return self._markers_linear(q)

    def marker_velocities(self, v) -> np.ndarray:
        """Marker velocities from v of shape (..., nq) -> (..., nmarkers, 2); likewise
        accelerations from qdd."""
        return self._markers_linear(v)

    def _markers_linear(self, z) -> np.ndarray:
        # r + xi u + eta perp(u) is linear in (r, u): one map serves q, v and qdd.
        z = checked_coordinates(self, z, "coordinates")
        zb = z.reshape(z.shape[:-1] + (self.nbody, 4))[..., self.marker_body, :]
        xi, eta = self.marker_local[:, 0], self.marker_local[:, 1]
        x = zb[..., 0] + xi * zb[..., 2] - eta * zb[..., 3]
        y = zb[..., 1] + xi * zb[..., 3] + eta * zb[..., 2]
        return np.stack([x, y], axis=-1)

    # -- files -----------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model description to a JSON model file (see :mod:`linkdyn.modelfile`)."""
        save_description(self.description, checked_path("save", path))


def kinematic_only(model: Model) -> bool:
    """Whether ``model`` has kinematics but no dynamics: a spherical or spatial linkage in
    natural coordinates, or a planar linkage of points and lines (placeholder masses)."""
    return not model.dynamic or bool(getattr(model.description, "kinematic", False))


def require_dynamic(model: Model, what: str) -> None:
    """Refuse the kinematic-only models of spherical and spatial linkages where dynamics is
    asked for (they have no masses, inertias or forces)."""
    if not model.dynamic:
        raise ModelError(f"{what}: model {model.name!r} is a {model.space} linkage in natural "
                         "coordinates, a kinematic description without masses or forces: "
                         "linkdyn.kinematics is its solver. To simulate it, describe its links "
                         "as bodies with their masses and inertias "
                         "(linkdyn.SpatialModelBuilder; the built-in five_ss_dynamic is the "
                         "5-SS linkage so described)",
                         model.name)
    if getattr(model.description, "kinematic", False):
        raise ModelError(f"{what}: model {model.name!r} is a linkage of points and lines, a "
                         "kinematic description: its bodies carry placeholder masses, so it "
                         "has no dynamics (linkdyn.kinematics is its solver). To simulate it, "
                         "describe its bodies with their masses (ModelBuilder or a model "
                         "file)", model.name)


def checked_time(t, name: str = "t") -> float:
    """``t`` as a float, or ArgumentError naming ``name``: a finite number of seconds (not
    a string, a boolean or an array of several)."""
    if isinstance(t, np.ndarray) and t.ndim == 0:
        t = t.item()
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer,
                                                              np.floating)) \
            or not math.isfinite(t):
        raise ArgumentError(f"{name} must be a finite number of seconds, got {t!r}")
    return float(t)


def checked_positive(name: str, value) -> float:
    """A positive finite number (a tolerance, a period), or ArgumentError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ArgumentError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def checked_count(name: str, value) -> int:
    """A positive integer (an iteration limit, a number of starts) up to MAX_COUNT (the
    compiled loops count in C ints), or ArgumentError naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not 1 <= value <= MAX_COUNT:
        raise ArgumentError(f"{name} must be a positive integer up to {MAX_COUNT}, got "
                            f"{value!r}")
    return int(value)


def checked_coordinates(model, z, what: str = "q") -> np.ndarray:
    """``z`` as a float array whose last axis has the model's nq coordinates (any leading
    axes: one row per time), or ArgumentError saying what it got."""
    try:
        arr = np.asarray(z, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be an array of {model.nq} numbers, got "
                            f"{z!r}") from None
    if arr.ndim == 0 or arr.shape[-1] != model.nq:
        raise ArgumentError(f"{what} must have {model.nq} coordinates (last axis), got shape "
                            f"{arr.shape}")
    return arr


def checked_array(name: str, value) -> np.ndarray:
    """``value`` as an array of finite floats (any shape), or ArgumentError naming
    ``name``."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be an array of numbers, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ArgumentError(f"{name} must be finite, got {arr.tolist()}")
    return arr


def memory_limit() -> float:
    """Bytes an output or a model may take: half of the least of the machine's memory, the
    process' address-space limit (RLIMIT_AS) and its cgroup's memory limit (8 GiB where
    none is known)."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
            limits.append(soft)
    except (ImportError, AttributeError, ValueError, OSError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 2**62:   # "max" or a huge value: no limit
            limits.append(int(text))
    return 0.5 * min(limits) if limits else 8.0 * 2**30


#: Bytes of a factor's entry, at least: its value and a 32-bit index.
FACTOR_ENTRY_BYTES = 12


def check_normal_fill(model, what: str) -> None:
    """OutOfMemoryError, before any factorisation, for a model whose normal matrix
    Phi_q M^-1 Phi_q^T (the projections' A A^T, the explicit method's S, the fill of the
    BDF's KKT factor) cannot fit: the rows on its densest coordinate fill a dense block of
    their number squared, a lower bound of its entries. 20,000 copies of one pin (40,001
    rows on each of four coordinates) need 1.6e9 entries, 19 GiB at least; they failed
    only once the factorisation had run out of memory."""
    rows = model.phiq_column_entries if model.phiq_colind.size else 0
    need = FACTOR_ENTRY_BYTES * float(rows) ** 2
    limit = memory_limit()
    if need > limit:
        raise OutOfMemoryError(
            f"{what}: model {model.name!r} has {rows} constraint rows on one coordinate: "
            f"their block of Phi_q M^-1 Phi_q^T alone holds {float(rows) ** 2:.3g} entries "
            f"(at least {need / 2**30:.3g} GiB), more than the {limit / 2**30:.3g} GiB "
            "allowed (half of what this process may use); are joints repeated?")


def check_model_size(count: int, bytes_each: float, what: str, unit: str) -> None:
    """Refuse to generate a model that would not fit (``count`` units of about
    ``bytes_each`` bytes each while it is built, compiled and integrated), before building
    any of it: building a billion bars would otherwise run for days and then fail."""
    size, limit = float(count) * bytes_each, memory_limit()
    if size > limit:
        raise ModelError(f"{what}: {count} {unit} need about {size / 2**30:.3g} GiB to build "
                         f"and run, more than the {limit / 2**30:.3g} GiB allowed (half of "
                         "what this process may use)")


def check_output_size(rows: int, row_values: int, what: str) -> None:
    """Refuse an output that would not fit: more than :func:`memory_limit`, with the
    estimate and what to change."""
    size, limit = 8.0 * rows * row_values, memory_limit()
    if size > limit:
        raise ArgumentError(f"{what}: {rows} output rows of {row_values} values need "
                            f"{size / 2**30:.3g} GiB, more than the {limit / 2**30:.3g} GiB "
                            "allowed (half of what this process may use); ask for fewer "
                            "output times")


