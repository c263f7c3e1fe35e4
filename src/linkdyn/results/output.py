"""What a simulation keeps at its output times.

By default :func:`linkdyn.simulate` keeps every output row whole: coordinates ``q``,
velocities ``v``, multipliers ``lam`` and quadratures ``z``, 2 nq + nc + nz numbers a row.
For a big model that is most of the cost: a 20,000-bar chain has 200,000 numbers a row, and
1,001 rows take 1.6 GB. ``simulate(..., record=Record(...))`` keeps named series instead:

    record = linkdyn.Record(markers=["tip"], bodies=["bar9999"], joints=["pin0"],
                            invariants=["energy"])
    result = linkdyn.simulate(model, 1.0, record=record)
    result.marker("tip"), result.energy                 # as with whole rows

The integrator then writes whole rows into a small buffer (``Record.buffer_rows`` rows at a
time); each full buffer is reduced to the series asked for and reused. The rows come out of the
same arithmetic as whole-row output (csrc/ld_run.c, ``stop_when_full``): the series equal the
accessors of a whole-row result bit for bit. What was not recorded raises
:class:`~linkdyn.errors.NotRecordedError`; ``result.q``, ``v``, ``lam`` and ``z`` are None.

What each entry records (the result accessor of the same name returns it):

================  ============================================================================
``markers``       ``marker``, ``marker_velocity``
``bodies``        ``body_position``, ``body_angle`` (spatial: ``body_quaternion``, and
                  ``body_rotation`` from it; a rod's ``body_axis``), ``body_velocity``,
                  ``body_angular_velocity``
``joints``        ``joint_force``, ``joint_moment``
``drivers``       ``driver_effort``
``elements``      ``element_force``, ``element_work`` and, unless a point load,
                  ``element_coordinate``
``invariants``    any of ``energy``, ``kinetic_energy``, ``potential_energy``, ``work``,
                  ``phi_norm``, ``phid_norm``
================  ============================================================================

Output times are chosen as before (``t_out``, ``dt_out``), or ``t_out="final"`` (one row, at
the end of the run) and ``t_out="events"`` (the start, each event, the end), with or without a
``Record``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..compile.model import check_output_size
from ..errors import ArgumentError, ArgumentTypeError, NotRecordedError, name_list

__all__ = ["Record", "INVARIANTS"]

#: Invariants a Record can keep (properties of SimulationResult).
INVARIANTS = ("energy", "kinetic_energy", "potential_energy", "work", "phi_norm", "phid_norm")

# Accessors recorded per entry kind, with the numbers per row each returns.
_ACCESSORS = {
    "markers": (("marker", 2), ("marker_velocity", 2)),
    "bodies": (("body_position", 2), ("body_angle", 1), ("body_velocity", 2),
               ("body_angular_velocity", 1)),
    "joints": (("joint_force", 2), ("joint_moment", 1)),
    "drivers": (("driver_effort", 1),),
    "elements": (("element_force", 2), ("element_work", 1), ("element_coordinate", 1)),
}
# ... and for spatial models, where they differ.
_SPATIAL = {
    "markers": (("marker", 3), ("marker_velocity", 3)),
    "bodies": (("body_position", 3), ("body_quaternion", 4), ("body_velocity", 3),
               ("body_angular_velocity", 3)),
    "joints": (("joint_force", 3), ("joint_moment", 3)),
}
#: Whole rows per buffer: at most this many numbers (8 MiB) and at least one row.
BUFFER_VALUES = 1 << 20


def _names(field, value):
    if isinstance(value, str):
        return (value,)
    try:
        names = tuple(value)
    except TypeError:
        raise ArgumentTypeError(f"Record.{field} must be a sequence of names, got "
                                f"{value!r}") from None
    for name in names:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"Record.{field}: names are strings, got {name!r}")
    return names


@dataclass(frozen=True)
class Record:
    """Series a simulation keeps at its output times (see :mod:`linkdyn.output`).

    Each field is a sequence of names (a single name is accepted): ``markers``, ``bodies``,
    ``joints``, ``drivers``, force ``elements`` of the model, and ``invariants`` from
    :data:`INVARIANTS`."""

    markers: tuple = ()
    bodies: tuple = ()
    joints: tuple = ()
    drivers: tuple = ()
    elements: tuple = ()
    invariants: tuple = ()

    def __post_init__(self):
        for field in ("markers", "bodies", "joints", "drivers", "elements", "invariants"):
            object.__setattr__(self, field, _names(field, getattr(self, field)))
        for name in self.invariants:
            if name not in INVARIANTS:
                raise ArgumentError(f"Record.invariants: unknown invariant {name!r} (known: "
                                    f"{', '.join(INVARIANTS)})")

    def series(self, model) -> list:
        """The (accessor, argument or None, numbers per row) triples this record keeps for
        ``model``; raises ValueError naming an entry the model does not have."""
        known = {"markers": model.marker_names, "bodies": model.body_names,
                 "joints": model.joint_names, "drivers": model.driver_names,
                 "elements": model.force_names}
        out = []
        for field, accessors in _ACCESSORS.items():
            if model.space == "spatial" and model.dynamic:
                accessors = _SPATIAL.get(field, accessors)
            for name in getattr(self, field):
                if name not in known[field]:
                    raise ArgumentError(
                        f"Record.{field}: model {model.name!r} has no {field[:-1]} {name!r} "
                        f"({field}: {name_list(known[field])})")
                for accessor, width in accessors:
                    if accessor == "body_quaternion" and \
                            model.rods[model.body_index(name)]:
                        accessor, width = "body_axis", 3     # a rod: an axis, no frame
                    if field == "elements":
                        recs, _ = model.force_info["elements"][name]
                        if accessor == "element_coordinate" and not recs:
                            continue   # a point load has no coordinate
                        if accessor == "element_force" and recs:
                            width = 1
                    out.append((accessor, name, width))
        out.extend((name, None, 1) for name in self.invariants)
        return out


class WholeRows:
    """Output kept as whole rows (q, v, lam, z) in one array of all the output times."""

    seconds = 0.0       # no reduction

    def __init__(self, times, width):
        self.times = times
        self.rows = np.empty((times.size, width))
        self.written = 0

    def integrate(self, integ, target):
        status, self.written = integ.integrate(target, self.times, self.rows, self.written)
        return status

    @property
    def last_t(self):
        return self.times[self.written - 1]

    def append(self, t, row):
        """A row at time t that is not one of the output times (an event's state)."""
        self.times = np.insert(self.times, self.written, t)
        self.rows = np.insert(self.rows, self.written, row, axis=0)
        self.written += 1

    def result(self):
        """(t, rows) of the run."""
        return self.times[:self.written].copy(), self.rows[:self.written]


class RecordedSeries:
    """Output reduced to a Record's ``series`` (:meth:`Record.series`). Whole rows go through
    a buffer of ``buffer_rows``; ``reduce(t, rows, first)`` turns each full buffer into
    {(accessor, argument): values} (``first``: the index of its first row in the run)."""

    def __init__(self, times, width, series, reduce):
        self.times = times
        self.buffer_rows = int(max(1, min(times.size, BUFFER_VALUES // max(1, width))))
        self.buffer = np.empty((self.buffer_rows, width))
        self.buffer_t = np.empty(self.buffer_rows)
        self.reduce = reduce
        self.parts = {(a, n): [] for a, n, _ in series}
        self.t_parts = []
        self.next = 0         # the next of the output times
        self.filled = 0       # rows in the buffer
        self.reduced = 0      # rows of the run reduced so far
        self.seconds = 0.0
        self.last_t = -np.inf

    @property
    def written(self):
        """Rows of the run so far."""
        return self.reduced + self.filled

    def integrate(self, integ, target):
        while True:
            room = self.buffer_rows - self.filled
            chunk = self.times[self.next:self.next + room]
            status, n = integ.integrate(target, chunk,
                                        self.buffer[self.filled:self.filled + chunk.size], 0)
            self.buffer_t[self.filled:self.filled + n] = chunk[:n]
            self.next += n
            self.filled += n
            if n:
                self.last_t = float(chunk[n - 1])
            if status != 3:
                return status
            self.flush()

    def append(self, t, row):
        """A row at time t that is not one of the output times (an event's state)."""
        self.flush()
        self._reduce(np.array([t], dtype=float), np.asarray(row, dtype=float)[None, :])

    def flush(self):
        if self.filled:
            n, self.filled = self.filled, 0
            self._reduce(self.buffer_t[:n].copy(), self.buffer[:n])

    def _reduce(self, t, rows):
        c0 = time.perf_counter()
        values = self.reduce(t, rows, self.reduced)
        for key, value in values.items():
            self.parts[key].append(np.array(value, copy=True))
        self.t_parts.append(t)
        self.reduced += t.size
        self.last_t = float(t[-1])
        self.seconds += time.perf_counter() - c0

    def result(self):
        """(t, recorded series) of the run."""
        self.flush()
        out = {}
        for (accessor, name), parts in self.parts.items():
            key = (accessor,) if name is None else (accessor, name)
            values = np.concatenate(parts) if parts else np.zeros(0)
            if accessor == "body_angle":
                values = np.unwrap(values)   # continuous across buffers too
            if accessor == "body_quaternion":
                values = continuous_quaternions(values)   # across buffers too
            out[key] = values
        t = np.concatenate(self.t_parts) if self.t_parts else np.zeros(0)
        return t, out


def continuous_quaternions(quat) -> np.ndarray:
    """Unit quaternions (n, 4), scalar first, with the sign of each chosen so that
    consecutive ones lie on the same side (q and -q are the same rotation) and the first
    has w >= 0."""
    quat = np.array(quat, dtype=float)
    if len(quat):
        flips = np.cumsum(np.r_[0, np.sum(quat[1:] * quat[:-1], axis=1) < 0]) % 2
        quat *= np.where(flips, -1.0, 1.0)[:, None]
        if quat[0, 0] < 0:
            quat = -quat
    return quat


def row_values(series, width) -> int:
    """Numbers kept per output row: ``width`` for whole rows (``series`` None), else those
    of a Record's series."""
    if series is None:
        return width
    return sum(w for _, _, w in series)


def check_size(rows, series, width, what):
    """check_output_size for simulate, whose message also names its other ways out."""
    try:
        check_output_size(rows, row_values(series, width), what)
    except ValueError as exc:
        hint = ("" if series is not None else
                ", or keep fewer numbers a row: record=linkdyn.Record(...) keeps named series, "
                "t_out='final' the last row only")
        raise ArgumentError(f"{exc}{hint}") from None


def not_recorded(result, key):
    """The error for an accessor of a recorded result that was not recorded."""
    kept = sorted({k[0] if len(k) == 1 else f"{k[0]}({k[1]!r})" for k in result.recorded})
    what = key[0] if len(key) == 1 else f"{key[0]}({key[1]!r})"
    return NotRecordedError(
        f"{what} was not recorded: this result keeps the series of its Record "
        f"({', '.join(kept) or 'none'}); add the entry to the Record, or simulate without "
        "one to keep whole rows")
