"""Exceptions raised by linkdyn.

Every error a user can provoke with bad input is one of these, and its message names the
offending entry (body, joint, marker, file field, constraint row or time) and what was expected.
The errors about arguments also derive from the builtin class Python code expects
(ValueError, TypeError, KeyError), so that both ``except linkdyn.LinkdynError`` and
``except ValueError`` catch a bad value.

    LinkdynError                 base class of everything below
    ├── ArgumentError (ValueError)
    │                            a bad argument to a function: out of range, or a wrong
    │                            combination of options
    ├── ArgumentTypeError (TypeError)
    │                            an argument of the wrong type
    ├── UnknownNameError (KeyError)
    │                            a name the model has no element of (body, marker, joint,
    │                            driver, force element, contact, built-in linkage)
    ├── ModelError (ValueError)  an invalid model description (builder or file)
    │   └── ModelFileError       a model file that cannot be read or has a bad field
    ├── AssemblyError            no consistent state near the given guess
    │   └── RedundantConstraintsError
    │                            the constraint Jacobian loses rank (redundant or
    │                            conflicting constraints)
    ├── EquilibriumError         no static equilibrium near the guess
    ├── SynthesisError (ValueError)
    │                            no start of a dimensional synthesis met its targets and
    │                            constraints (each start's reason in ``failures``)
    ├── KinematicsError          the position problem of a kinematic sweep has no solution
    │   └── SingularConfigurationError
    │                            the Jacobian of a driven mechanism became singular
    ├── NotRecordedError (KeyError)
    │                            a series a result did not record (linkdyn.output.Record)
    └── SimulationError          the integrator stopped before t_end
        ├── StepSizeError        the step size fell below its minimum
        ├── ConvergenceError     the Newton iteration kept failing
        ├── SingularJacobianError
        │                        the iteration matrix is singular (Phi_q lost rank)
        ├── NonFiniteError       the model produced NaN or Inf
        ├── ForceElementError    a force element left its domain (a spring's points met)
        └── ControllerError      a controller raised or returned a bad input
"""

from __future__ import annotations

import math

__all__ = [
    "LinkdynError",
    "ArgumentError",
    "ArgumentTypeError",
    "UnknownNameError",
    "ToleranceWarning",
    "InterruptedWarning",
    "ModelWarning",
    "OutOfMemoryError",
    "ModelError",
    "ModelFileError",
    "AssemblyError",
    "RedundantConstraintsError",
    "KinematicsError",
    "EquilibriumError",
    "SynthesisError",
    "SingularConfigurationError",
    "SimulationError",
    "StepSizeError",
    "ConvergenceError",
    "SingularJacobianError",
    "NonFiniteError",
    "ForceElementError",
    "ControllerError",
]


def name_list(names, most: int = 20) -> str:
    """The names an error lists as what there is: all of them, or the first ``most`` and
    how many more (a chain of 20,000 bars would otherwise print every joint)."""
    names = [str(n) for n in names]
    if not names:
        return "none"
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[:most]) + f", ... ({len(names) - most} more)"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """'1 joint', '2 joints', '1 body', '2 bodies'."""
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def summary(kind: str, name: str, t=None, *parts: str) -> str:
    """A result's repr, one line: ``<kind 'name': n rows, t = a to b s, parts...>`` (the
    default repr of a run's dataclass printed every array, pages of them)."""
    if t is not None:
        rows = counted(len(t), "row")
        span = (() if not len(t) else (f"t = {t[0]:g} s",) if t[0] == t[-1] else
                (f"t = {t[0]:g} to {t[-1]:g} s",))
        parts = (rows, *span) + parts
    return f"<{kind} {name!r}: {', '.join(parts)}>"


class LinkdynError(Exception):
    """Base class of all linkdyn errors."""


class ToleranceWarning(UserWarning):
    """A run could not use the tolerance asked for (the local error test stopped at the
    round-off floor of the model's coordinates); the message says what it used and why."""


class OutOfMemoryError(LinkdynError, MemoryError):
    """A model or a run needs more memory than this process may use (its address-space
    limit, its cgroup's memory limit, or the machine's memory); the message names the model
    and what it was making. A MemoryError too."""


class ModelWarning(UserWarning):
    """A model that is valid but probably not what was meant (a body connected to nothing,
    a start far from any assembled position); the message names the element."""


class InterruptedWarning(RuntimeWarning):
    """A run was interrupted (Ctrl-C): its result holds what was computed up to then, and
    its ``status`` is ``"interrupted"``."""


class ArgumentError(LinkdynError, ValueError):
    """A bad argument: a value out of its range, or options that do not go together (the
    message names the argument and says what was expected)."""


class ArgumentTypeError(LinkdynError, TypeError):
    """An argument of the wrong type (the message names it and the type expected)."""


class UnknownNameError(LinkdynError, KeyError):
    """A name the model (or the table asked) has no entry for; the message lists the names
    it has."""

    def __str__(self):
        # KeyError shows its argument's repr; the message reads better as it is.
        return str(self.args[0]) if self.args else ""


class ModelError(LinkdynError, ValueError):
    """An invalid model description.

    Attributes
    ----------
    entry : str or None
        The name of the offending element (body, joint, marker, ground point), or None when
        the problem concerns the model as a whole.
    """

    def __init__(self, message: str, entry: str | None = None):
        super().__init__(message)
        self.entry = entry


class ModelFileError(ModelError):
    """A model file that cannot be parsed or holds a missing, mistyped or unknown field.

    Attributes
    ----------
    path : str or None
        The file, when the description came from one.
    field : str or None
        The location inside the file, e.g. ``bodies[3].length``.
    """

    def __init__(self, message: str, path: str | None = None, field: str | None = None,
                 entry: str | None = None):
        where = " ".join(p for p in (f"{path}:" if path else "", field or "") if p)
        super().__init__(f"{where} {message}" if where else message, entry=entry)
        self.path = path
        self.field = field


class AssemblyError(LinkdynError):
    """No configuration satisfying the constraints was found near the given guess.

    Attributes
    ----------
    constraints : list of str
        Names of the constraint rows involved (e.g. ``"J4.x"``, ``"bar3.unit"``), worst first.
    """

    def __init__(self, message: str, constraints=()):
        super().__init__(message)
        self.constraints = list(constraints)


class RedundantConstraintsError(AssemblyError):
    """The constraint Jacobian does not have full row rank: some constraints are redundant
    (or conflicting) at the configuration reached. ``constraints`` lists the rows involved."""


class SimulationError(LinkdynError):
    """The integrator stopped before reaching t_end.

    Attributes
    ----------
    t, h : float
        Time reached and the step size being tried when it stopped.
    result : SimulationResult
        Everything computed up to ``t`` (output rows before the failure).
    constraints : list of str
        For a singular iteration matrix, the constraint rows (or coordinates) involved.
    """

    def __init__(self, message: str, t: float, h: float, result=None, constraints=()):
        super().__init__(message)
        self.t = t
        self.h = h
        self.result = result
        self.constraints = list(constraints)


class StepSizeError(SimulationError):
    """The error test kept failing until the step size fell below its minimum."""


class ConvergenceError(SimulationError):
    """The Newton iteration kept failing until the step size fell below its minimum."""


class SingularJacobianError(SimulationError):
    """The iteration matrix became singular: the constraint Jacobian lost rank."""


class NonFiniteError(SimulationError):
    """The model produced NaN or Inf and cutting the step did not help."""


class ForceElementError(SimulationError):
    """A force element cannot be evaluated (a spring-damper whose two points coincide: the
    direction of its force is undefined). ``element`` names it."""

    def __init__(self, message, t, h, result=None, element=None):
        super().__init__(message, t, h, result)
        self.element = element


class ControllerError(SimulationError):
    """The controller raised (the exception is chained as ``__cause__``) or returned
    something other than finite inputs of the model's motors and servos."""


class SynthesisError(LinkdynError, ValueError):
    """No start of a dimensional synthesis gave a linkage that meets the targets and the
    constraints; ``failures`` holds (start, reason) for each start."""

    def __init__(self, message: str, failures=()):
        super().__init__(message)
        self.failures = tuple(failures)


class EquilibriumError(LinkdynError):
    """Newton's method for the static equilibrium did not converge. ``q`` is the last
    iterate and ``residual`` its max-norm residual."""

    def __init__(self, message: str, q=None, residual: float = math.nan):
        super().__init__(message)
        self.q = q
        self.residual = residual


class KinematicsError(LinkdynError):
    """A kinematic sweep stopped: no configuration satisfies the constraints at time ``t``.

    Attributes: ``t`` (the time), ``constraints`` (rows involved, when known) and ``result``
    (the sweep up to the last solved time)."""

    def __init__(self, message: str, t: float, constraints=(), result=None):
        super().__init__(message)
        self.t = t
        self.constraints = list(constraints)
        self.result = result


class SingularConfigurationError(KinematicsError):
    """The constraint Jacobian of the driven mechanism became singular at time ``t`` (a
    dead centre, a branch point or a limit of the drivers' range)."""


class NotRecordedError(LinkdynError, KeyError):
    """A result made with a :class:`linkdyn.output.Record` was asked for a series it did not
    record; the message lists what it did record."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""
