"""Exact sensitivities of a driven mechanism's kinematics to its design parameters.

``kinematic_sensitivities(model, ["bodies.L5.length", "ground.P2.x"], times)`` runs the
kinematic analysis and returns, at every time, the derivatives of the positions, velocities
and accelerations (and of markers and body angles made of them) with respect to each named
parameter (a path into the model's file form, :mod:`linkdyn.describe.parameters`; for a
:class:`linkdyn.geometric.Linkage`, into its linkage file: ``joints.B.coordinates.x``).

Method. The positions solve Phi(q, p, t) = 0, so by the implicit function theorem

    Phi_q dq/dp = -Phi_p,
    Phi_q dv/dp = -[(Phi_q v + Phi_t)_q dq/dp + (Phi_q v + Phi_t)_p],
    Phi_q da/dp = -[(Phi_q a - gamma)_q dq/dp - gamma_v dv/dp + (Phi_q a - gamma)_p],

one sparse factorisation of Phi_q per time serving every parameter, its solves made for all
parameters at once, in the compiled sweep (``linkdyn._kinematics.SensitivitySweep``; a model
with Python-function laws has no file form, so it has no parameters). Where the residuals'
parameter derivatives are known before the analysis (the exact kernels below) and every
time is asked for, that sweep is the analysis' own: each row's derivatives are formed as
soon as it is solved, with the factors at the solution that its velocities and
accelerations were solved with (linkdyn.solve.kinematics.kinematics_with_derivatives), so
that the rows that sub-steps, branch retries and steps over singular samples solve again
carry theirs too. Otherwise (members, or ``at`` some times) a second sweep over the
analysis' rows factorises Phi_q again at each. The directional
derivatives in q and v are differences without truncation error: linkdyn's constraints are
at most quadratic in the coordinates (fully Cartesian and natural coordinates), so Phi_q and
gamma are at most quadratic in q and v and a central difference of a quadratic is exact;
where no time factor multiplies a product of two coordinates (every driver but an angle
between two moving bodies), Phi_q v + Phi_t and Phi_q a - gamma are even affine in q and
their q-derivatives are the changes of Phi_q (its entries that change: a revolute joint's
are constants), Phi_t and gamma over a move along dq of the coordinates' own size (from
three parameters on, their Jacobians formed once a row: see SensitivitySweep.derivatives).
The derivatives in p are forward differences from the model itself to the model compiled at
p + h where the parameter enters the constraints affinely (lengths, body points, ground
points, a law's offset and amplitude: exact, and the result says so per parameter,
``exact``), checked by a zero second difference of the residuals of the models at p +- h at
states moved off the solution (from three parameters on, first jointly: see
:func:`_jointly_affine`); for the others (an axis angle, a law's rate) Richardson's
extrapolation over p +- h and p +- h/2, with an error of order h^4 (h = 1e-3 of the value's
scale, max(1, abs(value)), or of an inertia tensor's largest entry for its entries: some
1e-12 relative). Parameters whose derivatives the compile knows need no members
(:func:`linkdyn.design.derivative_sweep._exact_sweep`): a spherical or spatial linkage's
joint coordinates, in which its rows' coefficients are analytic, so that one complex step
each gives their derivatives exactly (:func:`linkdyn.compile.natural.parameter_kernels`),
as kernels that the sweep evaluates in place of the members' weighted sums; and the
parameters of planar models that only move points that revolute joints and markers hold (a
planar linkage's joint coordinates, :meth:`linkdyn.geometric.Linkage.point_derivatives`; a
model file's ground and body points and bar lengths), in which the rows are linear: a
moved point adds A(u) ds/dp to its revolute joint's rows (and u's rates in place of u to
their rates' derivatives), terms the compiled sweep forms with no kernels at all.

Markers are linear in q with body-fixed points that may depend on p: their derivatives add
the marker's own p-derivative at fixed q. The kinetostatic input torque's derivatives
(:meth:`KinematicSensitivities.input_torque`) differentiate M a + Phi_q^T lam = Q along the
same rows; a parameter that moves no coordinate but enters those equations (a mass, a
density) is accepted for them.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..compile.model import Model, checked_array
from ..errors import (ArgumentError, ArgumentTypeError, InterruptedWarning, ModelError, counted,
                      summary)
from ..solve.interrupt import StopRequest
from ..solve.kinematics import kinematics, kinematics_with_derivatives
from .derivative_sweep import _exact_sweep, _restricted, _swept, derivative_plan
from .family import ParameterFamily
from .metrics import input_torque

__all__ = ["kinematic_sensitivities", "KinematicSensitivities"]


class _ParameterDerivatives:
    """Markers and body angles of derivatives ``dq``, ``dv`` (and ``da``) of a result with
    coordinates ``q`` of ``model`` (mixed into the sensitivity results)."""

    def __repr__(self) -> str:
        names = list(self.parameters[:3]) + (["..."] if len(self.parameters) > 3 else [])
        exact = sum(map(bool, self.exact))
        return summary(type(self).__name__, self.model.name, self.t,
                       f"{counted(len(self.parameters), 'parameter')} ({', '.join(names)})",
                       f"{exact} exact")

    def _marker(self, name, dx, part) -> np.ndarray:
        if dx is None:
            _beyond_order(self, part)
        model = self.model
        B = _marker_map(model)[0][model.marker_index(name)]   # (dim, nq): markers are affine
        own = self._marker_p.get((name, part))
        out = np.einsum("dk,nkp->ndp", B, dx)
        if own is not None:
            out = out + own
        return out

    def marker(self, name) -> np.ndarray:
        """d(marker position)/dp, (n, 2 or 3, p)."""
        return self._marker(name, self.dq, "q")

    def marker_velocity(self, name) -> np.ndarray:
        """d(marker velocity)/dp, (n, 2 or 3, p)."""
        return self._marker(name, self.dv, "v")

    def body_angle(self, name) -> np.ndarray:
        """d(angle of a planar body's u)/dp, (n, p), rad per unit of the parameter."""
        if self.model.marker_dimension != 2:
            raise ArgumentError("body_angle: planar bodies only")
        k = 4 * self.model.body_names.index(name) if name in self.model.body_names else None
        if k is None:
            raise ArgumentError(f"model {self.model.name!r} has no body {name!r}")
        ux, uy = self.q[:, k + 2, None], self.q[:, k + 3, None]
        return (ux * self.dq[:, k + 3] - uy * self.dq[:, k + 2]) / (ux**2 + uy**2)


#: A kinematic part's time derivative order, and what it is called.
PART_ORDER = {"q": 0, "v": 1, "a": 2}
ORDER_NAMES = ("positions", "velocities", "accelerations")


def _beyond_order(s, part):
    """ArgumentError: ``s`` was not differentiated as far as ``part`` ("v" or "a")."""
    k = PART_ORDER[part]
    raise ArgumentError(f"the derivatives of the {ORDER_NAMES[k]} were not formed: these "
                        f"sensitivities were computed with order={s.order} (up to the "
                        f"{ORDER_NAMES[s.order]}); compute them with order={k} or more")


def checked_order(order) -> int:
    """``order`` (0, 1 or 2) checked, or an ArgumentError that says what it takes."""
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or \
            order not in (0, 1, 2):
        raise ArgumentError(f"order must be 0 (the positions' derivatives), 1 (and the "
                            f"velocities') or 2 (and the accelerations'), got {order!r}")
    return int(order)


@dataclass(frozen=True, repr=False)
class KinematicSensitivities(_ParameterDerivatives):
    """Derivatives of a kinematic analysis with respect to named parameters.

    ``t`` (n,); ``q``, ``v``, ``a`` (n, nq), the analysis itself; ``dq``, ``dv``, ``da``
    (n, nq, p), their derivatives with respect to ``parameters`` (p names, at ``values``),
    up to ``order`` (0: dq alone, dv and da None; 1: dq and dv; 2: all three);
    ``exact`` (p,) whether each parameter's derivatives are exact to round-off (it enters
    the constraints affinely, or it is a joint coordinate of a spherical or spatial linkage,
    whose rows the compile differentiates; otherwise of order h^4, see the module notes);
    ``status``
    "success", or "interrupted" where Ctrl-C stopped the analysis or its derivatives: the
    rows then end at the last time whose derivatives were complete."""

    model: Model
    parameters: tuple
    values: np.ndarray
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    dq: np.ndarray
    dv: np.ndarray
    da: np.ndarray
    exact: tuple
    _marker_p: dict = field(default_factory=dict, repr=False, compare=False)
    _members: tuple = field(default=None, repr=False, compare=False)
    status: str = "success"
    order: int = 2

    def input_torque(self, driver: str) -> np.ndarray:
        """d(input torque)/dp, (n, p): the derivatives of
        :func:`linkdyn.design.input_torque` (kinetostatics, M a + Phi_q^T lam = Q(q, v, t))
        along the analysis, in N m (or N) per unit of each parameter. Differentiating the
        kinetostatic equations,

            Phi_q^T dlam/dp = Q_q dq + Q_v dv - M da - H(lam) dq - f_p,

        with H(lam) = d(Phi_q^T lam)/dq and f_p = d(M a + Phi_q^T lam - Q)/dp at fixed
        (q, v, a, lam): central differences of the members at p +- h where that residual is
        affine in p (masses, densities, force parameters: exact), Richardson's
        extrapolation otherwise (a length moves a bar's inertia, L^3). Needs order=2."""
        if self.order < 2:
            _beyond_order(self, "a")
        model = self.model
        input_torque(self, driver)          # the checks: a dynamic model, a known driver
        from scipy.sparse.linalg import splu

        member, steps, dynamic_exact = self._members
        if dynamic_exact is None:       # a call that knew the family (see above): judge now
            dynamic_exact = _kinetostatic_terms(model, member, steps, self.t, self.q, self.v,
                                                self.a, [True] * len(steps))
        row = model.constraint_names.index(driver)
        cols = model.phiq_colind
        n, p = len(self.t), len(self.parameters)
        out = np.empty((n, p))
        for i in range(n):
            t, q, v, a = self.t[i], self.q[i], self.v[i], self.a[i]
            lu = splu(model.phi_q(q, t).T.tocsc())
            lam = lu.solve(model.force(q, v, t) - model.mass * a)
            Qq, Qv = model.force_q(q, v, t), model.force_v(q, v, t)
            H = model.constraint_hessian(q, lam, t)
            for j in range(p):
                def f(step, j=j):
                    return dynamic_residual(member(j, step), t, q, v, a, lam, cols)[:model.nq]
                fp = (_central(f, steps[j]) if dynamic_exact[j] else
                      _difference(f, steps[j])[0])
                rhs = (Qq @ self.dq[i, :, j] + Qv @ self.dv[i, :, j]
                       - model.mass * self.da[i, :, j] - H @ self.dq[i, :, j] - fp)
                out[i, j] = -lu.solve(rhs)[row]
        return out

    def marker_acceleration(self, name) -> np.ndarray:
        """d(marker acceleration)/dp, (n, 2 or 3, p)."""
        return self._marker(name, self.da, "a")


def _difference(values, h):
    """dF/dp from F at p +- h and p +- h/2 (``values(step)`` is F at p + step): Richardson's
    extrapolation of the two central differences, exact for F affine in p and of order h^4
    otherwise. Returns (derivative, affine), affine when the two differences agree to
    round-off: within 1024 eps |F| / h, where a nonlinearity shows as h^2 times a third
    derivative (a second difference would miss a nonlinearity odd about p)."""
    plus, minus = values(h), values(-h)
    half_plus, half_minus = values(h / 2), values(-h / 2)
    d1 = (plus - minus) / (2.0 * h)
    d2 = (half_plus - half_minus) / h
    scale = max(float(np.max(np.abs(plus), initial=0.0)),
                float(np.max(np.abs(minus), initial=0.0)), 1.0)
    gap = float(np.max(np.abs(d1 - d2), initial=0.0))
    affine = gap <= 1024 * np.finfo(float).eps * scale / h
    return (4.0 * d2 - d1) / 3.0, affine


def _affine_test(plus, minus, middle) -> bool:
    """Whether F at p + h, p - h and p (``plus``, ``minus``, ``middle``) has a zero second
    difference to round-off (F affine in p). A dependence odd about p passes this test only
    where it is odd: evaluated at generic states (not at a solution, where an angle driver's
    row sin(theta - f(t)) is odd in a law's rate), it shows."""
    scale = max(float(np.abs(plus).max(initial=0.0)), float(np.abs(minus).max(initial=0.0)),
                1.0)
    gap = float(np.abs(plus + minus - 2.0 * middle).max(initial=0.0))
    return gap <= 1024 * np.finfo(float).eps * scale


def _affine_difference(values, h):
    """dF/dp from F at p + h, p - h and p (``values(step)``): the central difference where
    F is affine in p (exact), else Richardson's extrapolation (which asks for p +- h/2 as
    well). Returns (derivative, affine)."""
    plus, minus = values(h), values(-h)
    if _affine_test(plus, minus, values(0.0)):
        return (plus - minus) / (2.0 * h), True
    return _difference(values, h)[0], False


#: The options kinematic_sensitivities passes on: linkdyn.kinematics' keywords.
KINEMATICS_OPTIONS = frozenset(k for k, p in inspect.signature(kinematics).parameters.items()
                               if p.kind is inspect.Parameter.KEYWORD_ONLY)


def kinematic_sensitivities(model, parameters, times, *, at=None, order=2,
                            **options) -> KinematicSensitivities:
    """Run ``linkdyn.kinematics(model, times, **options)`` and differentiate it with respect
    to ``parameters`` (see the module notes for the method).

    Parameters
    ----------
    model : Model, str or Linkage
        A fully driven model, a built-in name or model file, or a
        :class:`linkdyn.geometric.Linkage` (whose joints' coordinates are then parameters).
    parameters : sequence of str
        Scalar parameter paths (:mod:`linkdyn.describe.parameters`).
    times : array_like
        The analysis' times, as for :func:`linkdyn.kinematics`.
    at : array_like, optional
        Differentiate at these times only (each one of ``times``): the analysis still runs
        over all of ``times`` (its branch is followed step by step), and the result holds
        the rows of ``at``. Default: every time (then the derivatives are formed in the
        analysis' own sweep where their kernels are known). Not with ``at_limit="reverse"``
        once a limit is passed: the times then repeat.
    order : {2, 1, 0}, optional
        The highest time derivative differentiated: 2 (default) the positions, velocities
        and accelerations; 1 the positions and velocities (``da`` is None); 0 the
        positions alone (``dv`` and ``da`` are None), which is what a path, function or
        motion synthesis needs. Each order is one more sparse solve a position and
        parameter: for one length of the Jansen linkage, some 0.15 to 0.3 of an analysis
        (docs: theory/sensitivities, "Cost").
    **options
        Passed to :func:`linkdyn.kinematics`.

    Raises
    ------
    ArgumentError, ModelError
        A bad path (named), a parameter that is not a number, a parameter whose change
        alters the model's coordinates or rows, or one that does not enter the kinematics
        at all (its derivatives would be identically zero).
    SingularConfigurationError
        A time where Phi_q is singular: the sensitivities do not exist there. (With
        ``on_singular="continue"`` the analysis goes on, and the derivatives at the times in
        its ``singularities`` are NaN.)

    Notes
    -----
    Ctrl-C stops the analysis or its derivatives and keeps what was computed: the result's
    ``status`` is then "interrupted" and its rows end at the last time whose derivatives
    are complete (an InterruptedWarning, a RuntimeWarning, says so).
    """
    # Ctrl-C in Python between the analysis and the derivatives' sweep (the members'
    # compiles) is a request polled before the sweep (linkdyn.solve.interrupt)
    unknown = sorted(set(options) - KINEMATICS_OPTIONS)
    if unknown:
        raise ArgumentTypeError(f"kinematic_sensitivities: unknown option(s) "
                                f"{', '.join(map(repr, unknown))} (those of linkdyn.kinematics "
                                f"are taken: {', '.join(sorted(KINEMATICS_OPTIONS))})")
    order = checked_order(order)
    with StopRequest() as stop:
        result = _kinematic_sensitivities(model, parameters, times, at, None, options,
                                          order)
        if result.status == "interrupted":
            stop.consume()
    return result


def _kinematic_sensitivities(model, parameters, times, at, known, options, order=2):
    """kinematic_sensitivities; ``known`` (or None): per parameter, whether an earlier call
    on the same family found it affine (its ``exact``), as a synthesis that differentiates
    one family at many values knows after its first analysis. An affine parameter then
    needs only its member at p + h: the forward difference from the base is exact for a
    residual affine in p, and the test is not run again. The parameters are not checked
    again either (the earlier call did), and the kinetostatic terms are judged only when
    ``input_torque`` asks for them. ``order``: as in :func:`kinematic_sensitivities`."""
    family = ParameterFamily(model, parameters)
    base = family.base
    if base.nc > base.nq:
        raise ModelError(f"kinematic sensitivities of model {base.name!r}: it has more "
                         f"constraint rows ({base.nc}) than coordinates ({base.nq}), redundant "
                         "ones (analysed with redundant='allow'). The positions of such an "
                         "overconstrained linkage have derivatives only along the parameter "
                         "changes that keep its special geometry (most changes lock it), "
                         "which linkdyn cannot tell; remove the redundant joints (they carry "
                         "no motion of their own) to differentiate the rest", base.name)
    # Derivatives the compile knows (see the notes) are formed in the analysis' own sweep,
    # with its factors, when every time is asked for; at some times (``at``), afterwards.
    sweep = _exact_sweep(family, model) if at is None else None
    if sweep is not None:
        plan = derivative_plan(base, *sweep[:-1], order=order)
        result, fused = kinematics_with_derivatives(base, times, plan, **options)
    else:
        result, fused = kinematics(base, times, **options), None
    if len(result.t) == 0:          # Ctrl-C before the first time: nothing to keep
        raise KeyboardInterrupt
    if fused is not None:
        return _undefined_at_singular(_exact_sensitivities(
            family, sweep[-1], result.status, (result.t, result.q, result.v, result.a),
            (*fused, [bool(x > 0.0) for x in plan.size]), order), result)
    joint = False
    rows = slice(None)      # every time: the analysis' own arrays, not copies
    if at is not None:
        at = np.atleast_1d(checked_array("at", at))
        if result.limits:
            raise ArgumentError("at: the input was reversed at limit positions "
                                "(at_limit='reverse'), so the analysis' times go back and forth "
                                "and repeat; differentiate every time (at=None) and take the "
                                "rows wanted")
        if result.status == "interrupted":      # the times the analysis reached
            at = at[at <= result.t[-1]]
            if len(at) == 0:
                raise KeyboardInterrupt
        rows = np.searchsorted(result.t, at)
        rows = np.minimum(rows, len(result.t) - 1)
        slack = 1e-12 * max(1.0, float(np.abs(at).max()))
        if not np.allclose(result.t[rows], at, rtol=0.0, atol=slack):
            raise ArgumentError("at: every time must be one of the analysis' times")
    t, q, v, a = result.t[rows], result.q[rows], result.v[rows], result.a[rows]
    p = len(family.names)
    sweep = _exact_sweep(family, model)
    if sweep is not None:       # derivatives the compile knows: no members (see the notes)
        return _undefined_at_singular(_exact_sensitivities(
            family, sweep[-1], result.status, (t, q, v, a),
            _swept(base, *sweep[:-1], t, q, v, a, order), order), result)
    steps, member = family.members()
    if known is None and p >= JOINT_TEST_PARAMETERS and \
            _jointly_affine(family, steps, result):
        known, joint = [True] * p, True

    dq, dv, da, exact, used = _derivatives_compiled(base, member, steps, t, q, v, a, p, known,
                                                    order)
    status, (t, q, v, a) = _rows_done(len(dq), result.status, (t, q, v, a), stacklevel=4)
    marker_p = marker_parameter_terms(base, member, steps, _states(q, v, a, order), used,
                                      exact, known)
    dq, dv, da = _up_to(order, dq, dv, da)
    if known is not None and not joint:
        return _undefined_at_singular(KinematicSensitivities(
            base, family.names, family.values, t, q, v, a, dq, dv, da,
            tuple(bool(e) for e in exact), marker_p, (member, steps, None), status, order),
            result)
    what = "the kinematics or the kinetostatics"
    if order < 2:       # no input torque's derivatives: the kinematics alone count
        dynamic_exact, what = None, "the kinematics"
    elif joint:     # the kinetostatic terms are judged when input_torque asks for them
        dynamic_exact = None
        if base.dynamic and not getattr(base.description, "kinematic", False):
            for j, e in enumerate(_kinetostatic_entries(base, member, steps, result)):
                used[j] = used[j] or e
    elif all(used):     # each moves the coordinates or a marker: none is unused whatever
        dynamic_exact = None        # the kinetostatics do, so they are judged when asked for
    else:   # judged near rows of the whole analysis (an interrupted one may have none)
        dynamic_exact = _kinetostatic_terms(base, member, steps, result.t, result.q, result.v,
                                            result.a, used)
    _refuse_unused(family, used, status, what)
    return _undefined_at_singular(KinematicSensitivities(
        base, family.names, family.values, t, q, v, a, dq, dv, da,
        tuple(bool(e) for e in exact), marker_p, (member, steps, dynamic_exact), status,
        order), result)


def _undefined_at_singular(s, result):
    """``s`` with NaN derivatives at the rows that the analysis found singular
    (on_singular="continue" let it go on there): Phi_q has no inverse, and the derivatives
    do not exist (what the solves gave there was its round-off, up to 1e16)."""
    for point in result.singularities:
        rows = np.flatnonzero(s.t == point.t)
        for x in (s.dq, s.dv, s.da):
            if x is not None:
                x[rows] = np.nan
    return s


#: From this many parameters on, their affinity is first tested jointly (two members, at
#: p +- h w, instead of one at p - h per parameter).
JOINT_TEST_PARAMETERS = 3


def _sample_rows(result) -> list:
    """The rows an affinity test samples: the analysis' first, middle and last."""
    n = len(result.t)
    return [(result.t[i], result.q[i], result.v[i], result.a[i])
            for i in sorted({0, n // 2, n - 1})]


def _generic_states(model, points, seed) -> list:
    """States (t, q, v, a, lam) moved off ``points`` [(t, q, v, a)] (coordinates by 1e-2 of
    their scale, velocities and accelerations by unit noise, generic multipliers), fixed by
    ``seed`` so that runs repeat: at a solution an odd dependence (an angle driver's
    sin(theta - f(t)) in a law's rate) would pass for affine."""
    rng = np.random.default_rng(seed)
    scale = max(1.0, max(float(np.abs(q).max()) for _, q, _, _ in points))
    return [(t, q + 1e-2 * scale * rng.standard_normal(model.nq),
             v + rng.standard_normal(model.nq), a + rng.standard_normal(model.nq),
             rng.standard_normal(model.nc)) for t, q, v, a in points]


def _jointly_affine(family, steps, result) -> bool:
    """Whether every residual the kinematic sensitivities difference (the constraints' Phi,
    Phi_q v + Phi_t and Phi_q a - gamma, and the markers' maps) is affine in the
    parameters jointly, from the members at
    p +- h w and the base (w: fixed random weights in +-[0.5, 1.5]), at generic states near
    three rows: their second difference is h^2 w^T H w, which vanishes for every w only where
    each Hessian H does, and for a random w almost surely only then. Two members then
    serve what one member at p - h per parameter would (each parameter's forward
    difference is exact); where the test fails (or a joint member cannot be made), each
    parameter is tested on its own."""
    base = family.base
    w = np.random.default_rng(20261127).uniform(0.5, 1.5, len(steps))
    w *= np.where(np.arange(len(steps)) % 2 == 0, 1.0, -1.0)
    try:
        plus, minus = (family.moved(sign * w * steps, "(all, jointly)") for sign in (1, -1))
    except ModelError:
        return False
    cols = base.phiq_colind
    for t, q, v, a, _ in _generic_states(base, _sample_rows(result), 20261127):
        if not _affine_test(*(_residuals(m_, t, q, v, a, cols) for m_ in (plus, minus, base))):
            return False
    maps = [np.concatenate([m_.ravel() for m_ in _marker_map(x)]) for x in (plus, minus, base)]
    return _affine_test(*maps)


def _kinetostatic_entries(base, member, steps, result) -> list:
    """Per parameter, whether M a + Phi_q^T lam - Q changes with it (its member at p + h
    against the base, at generic states near three rows)."""
    cols = base.phiq_colind
    states = _generic_states(base, _sample_rows(result), 20261126)
    at_base = [dynamic_residual(base, *x, cols)[:base.nq] for x in states]
    return [any(np.any(dynamic_residual(member(j, h), *x, cols)[:base.nq] != b_)
                for x, b_ in zip(states, at_base)) for j, h in enumerate(steps)]


def dynamic_residual(model, t, q, v, a, lam, cols) -> np.ndarray:
    """(M a + Phi_q^T lam - Q(q, v, t), Phi(q, t)) of ``model`` at one state (``cols``: the
    column of each value of its Jacobian pattern)."""
    vals = model.kernels.phi_q_values(q, t)
    if len(vals) != len(cols):
        # a member whose pattern differs: a coefficient that is zero in the model (a body
        # point's zero coordinate) has no entry in the model's pattern
        cols = model.phiq_colind
    f = model.mass * a + np.bincount(cols, vals * lam[model.phiq_rowind], minlength=model.nq)
    return np.concatenate([f - model.force(q, v, t), model.phi(q, t)])


def _central(values, h):
    """(F(p + h) - F(p - h)) / 2h (``values(step)`` is F at p + step)."""
    return (values(h) - values(-h)) / (2.0 * h)


def dynamic_affinity(base, member, steps, points, seed) -> tuple:
    """Per parameter, how the residuals (M a + Phi_q^T lam - Q, Phi) of the members at
    p +- h differ from the base's, at states moved off ``points`` [(t, q, v, a)] (coordinates
    by 1e-2 of their scale, velocities and accelerations by unit noise, generic multipliers;
    ``seed`` fixes them, so that runs repeat): (affine, enters, constraints) lists, whether
    their second difference vanishes to round-off, whether they change at all, and whether
    the constraint part does."""
    cols = base.phiq_colind
    samples = _generic_states(base, points, seed)
    at_base = [dynamic_residual(base, *x, cols) for x in samples]
    affine, enters, constraints = [], [], []
    for j, h in enumerate(steps):
        plus = [dynamic_residual(member(j, h), *x, cols) for x in samples]
        minus = [dynamic_residual(member(j, -h), *x, cols) for x in samples]
        affine.append(all(_affine_test(p_, m_, b_) for p_, m_, b_ in zip(plus, minus, at_base)))
        enters.append(any(np.any(p_ != m_) for p_, m_ in zip(plus, minus)))
        constraints.append(any(np.any(p_[base.nq:] != m_[base.nq:])
                               for p_, m_ in zip(plus, minus)))
    return affine, enters, constraints


def _kinetostatic_terms(base, member, steps, t, q, v, a, used) -> list:
    """Per parameter, whether the kinetostatic residual M a + Phi_q^T lam - Q enters it
    affinely (tested at states moved off three rows of the analysis), for a dynamic model;
    marks ``used`` where it enters at all (a mass)."""
    if not base.dynamic or getattr(base.description, "kinematic", False):
        return [False] * len(steps)
    rows = sorted({0, len(t) // 2, len(t) - 1})
    affine, enters, _ = dynamic_affinity(base, member, steps,
                                         [(t[i], q[i], v[i], a[i]) for i in rows], 20261126)
    for j, e in enumerate(enters):
        used[j] = used[j] or e
    return affine


def marker_parameter_terms(base, member, steps, states, used, exact, known=None) -> dict:
    """The markers' own parameter derivatives at fixed coordinates, {(marker, part): (n, dim,
    p)} for the parts of ``states`` ({"q": q, "v": v, ...}, each (n, nq)). Markers are
    B(p) q + c(p) (velocities B(p) v, accelerations B(p) a): their own p-derivatives are
    B_p q + c_p, B_p v and B_p a. Marks ``used`` and clears ``exact`` (lists, per parameter)
    where the markers depend on a parameter, and not affinely. ``known``: as in
    :func:`_kinematic_sensitivities`, a forward difference for parameters known affine."""
    marker_p = {}
    nq, p = base.nq, len(steps)
    n = len(next(iter(states.values())))
    for j in range(p):
        def marker_maps(step):
            return np.concatenate([m_.ravel() for m_ in _marker_map(member(j, step))])

        if known is not None and known[j]:
            mapped, aff = (marker_maps(steps[j]) - marker_maps(0.0)) / steps[j], True
        else:
            mapped, aff = _affine_difference(marker_maps, steps[j])
        if np.any(mapped != 0.0):
            used[j] = True
            exact[j] = exact[j] and aff
            k_, d_ = len(base.marker_names), base.marker_dimension
            Bp = mapped[:k_ * d_ * nq].reshape(k_, d_, nq)
            cp = mapped[k_ * d_ * nq:].reshape(k_, d_)
            for k, name in enumerate(base.marker_names):
                for part, x in states.items():
                    arr = marker_p.setdefault((name, part),
                                              np.zeros((n, base.marker_dimension, p)))
                    arr[:, :, j] = x @ Bp[k].T + (cp[k] if part == "q" else 0.0)
    return marker_p


def _residuals(model, t, q, v, a, cols):
    """Phi, Phi_q v + Phi_t and Phi_q a - gamma of ``model`` at one state, end to end."""
    return np.concatenate([model.phi(q, t),
                           _phi_q_times(model, q, t, v, cols) + model.phi_t(q, t),
                           _phi_q_times(model, q, t, a, cols) - model.gamma(q, v, t)])


def _derivatives_compiled(base, member, steps, t, q, v, a, p, known=None, order=2):
    """The derivatives on the compiled sweep (linkdyn._kinematics.SensitivitySweep): each
    parameter's residual derivatives are weighted sums over member models, the forward
    difference from the base to the member at p + h where the parameter enters affinely
    (exact; the base's residuals, shared by every such parameter, are evaluated once a row),
    and Richardson's extrapolation over p +- h and p +- h/2 otherwise. Affinity is judged at
    three of the rows (first, middle, last) from the members at p +- h and the base: their
    residuals' second difference vanishes to round-off, evaluated at states moved off the
    solution (see :func:`_affine_test`). ``known``: as in :func:`_kinematic_sensitivities`,
    a parameter known affine needs no test (nor its member at p - h). dv and da up to
    ``order`` (above it, arrays without columns)."""
    n, nq = len(t), base.nq
    cols = base.phiq_colind
    sample = sorted({0, n // 2, n - 1})
    exact = []
    models, start, index, weight = [], [0], [], []
    slot = {}       # id of a member's kernels -> its index in models: each evaluated once a row

    def use(kernels):
        if id(kernels) not in slot:
            slot[id(kernels)] = len(models)
            models.append(kernels)
        return slot[id(kernels)]
    # generic states near the sample rows (fixed, so that runs repeat)
    rng = np.random.default_rng(20261125)
    moved = [(x + 1e-2 * max(1.0, float(np.abs(x).max())) * rng.standard_normal(nq))
             for i in sample for x in (q[i], v[i], a[i])]
    at_base = [_residuals(base, t[i], *moved[3 * k:3 * k + 3], cols)
               for k, i in enumerate(sample)]
    for j, h in enumerate(steps):
        if known is not None and known[j]:
            exact.append(True)
            for shift, w in ((h, 1.0 / h), (0.0, -1.0 / h)):
                index.append(use(member(j, shift).kernels))
                weight.append(w)
            start.append(len(index))
            continue
        affine = True
        for k, i in enumerate(sample):
            affine = affine and _affine_test(
                *(_residuals(m_, t[i], *moved[3 * k:3 * k + 3], cols)
                  for m_ in (member(j, h), member(j, -h))), at_base[k])
        exact.append(affine)
        # affine: the forward difference from the model itself is exact too, and the base's
        # residuals are evaluated once a row for every parameter
        shifts = ({h: 1.0 / h, 0.0: -1.0 / h} if affine else
                  {h: -1.0 / (6.0 * h), -h: 1.0 / (6.0 * h), 0.5 * h: 4.0 / (3.0 * h),
                   -0.5 * h: -4.0 / (3.0 * h)})
        for shift, w in shifts.items():
            index.append(use(member(j, shift).kernels))
            weight.append(w)
        start.append(len(index))
    models, rows = _restricted(base, models, n)
    dq, dv, da, used = _swept(base, models, start, index, weight, rows, None, t, q, v, a,
                              order)
    return dq, dv, da, exact, used


def _rows_done(done, status, rows, stacklevel) -> tuple:
    """(status, rows): the analysis' rows (t, q, v, a) cut to the ``done`` whose derivatives
    are complete, "interrupted" and an InterruptedWarning (a RuntimeWarning) where Ctrl-C
    stopped the sweep before the last."""
    if done >= len(rows[0]):
        return status, rows
    warnings.warn(f"linkdyn: sensitivities interrupted after {done} of {len(rows[0])} times; "
                  "the result holds the times done", InterruptedWarning, stacklevel=stacklevel)
    return "interrupted", tuple(x[:done] for x in rows)


def _refuse_unused(family, used, status, what) -> None:
    """ArgumentError naming the parameters whose derivatives are zero (an interrupted sweep
    cannot tell)."""
    unused = [name for name, u in zip(family.names, used) if not u]
    if unused and status != "interrupted":
        raise ArgumentError(f"parameter(s) {', '.join(map(repr, unused))} do not enter "
                            f"{what} of model {family.base.name!r} (their derivatives are "
                            "zero)")


def _exact_sensitivities(family, own, status, rows, derivatives,
                         order=2) -> KinematicSensitivities:
    """The sensitivities from :func:`_exact_sweep`'s kernels, formed in the analysis' sweep
    or after it (``derivatives``: dq, dv, da at the analysis' ``rows`` t, q, v, a and
    whether each parameter's were nonzero anywhere), and its marker terms ``own``: no
    member compiled (until ``input_torque`` asks for the kinetostatics'), every derivative
    exact. ``order``: as in :func:`kinematic_sensitivities` (dv and da above it: arrays
    without columns)."""
    base, p = family.base, len(family.names)
    dq, dv, da, used = derivatives
    status, (t, q, v, a) = _rows_done(len(dq), status, rows, stacklevel=5)
    marker_p = own(*_states(q, v, a, order).values())
    for x in marker_p.values():     # a parameter that moves only a marker is used too
        used = np.logical_or(used, np.any(x != 0.0, axis=(0, 1)))
    _refuse_unused(family, used, status, "the kinematics")
    steps, member = family.members()        # compiled if input_torque asks for them
    return KinematicSensitivities(base, family.names, family.values, t, q, v, a,
                                  *_up_to(order, dq, dv, da), (True,) * p, marker_p,
                                  (member, steps, None), status, order)


def _states(q, v, a, order) -> dict:
    """{"q": q, "v": v, "a": a}, the parts up to ``order``."""
    return {part: x for part, x in (("q", q), ("v", v), ("a", a)) if PART_ORDER[part] <= order}


def _up_to(order, dq, dv, da) -> tuple:
    """(dq, dv, da) with None for those above ``order``."""
    return dq, (dv if order >= 1 else None), (da if order >= 2 else None)


def _phi_q_times(model, q, t, x, cols) -> np.ndarray:
    """Phi_q(q, t) x from the Jacobian's values in its fixed pattern (``cols``: the column
    of each value; no sparse matrix made: this is the inner loop of the sensitivities)."""
    vals = model.kernels.phi_q_values(q, t)
    if len(vals) != len(cols):   # a member whose pattern differs (see dynamic_residual)
        cols = model.phiq_colind
    return np.bincount(model.phiq_rowind, vals * x[cols], minlength=model.nc)


def _marker_map(model) -> tuple:
    """Markers are affine in the coordinates, ``B q + c`` (c: markers on fixed points):
    (B (nmarkers, dim, nq), c (nmarkers, dim))."""
    m, d = len(model.marker_names), model.marker_dimension
    c = model.marker_positions(np.zeros(model.nq)).reshape(m, d)
    columns = model.marker_positions(np.eye(model.nq)).reshape(model.nq, m, d) - c
    return np.moveaxis(columns, 0, -1), c
