"""Straight-line LU code for the kinematic sweep's Jacobian Phi_q and the BDF's iteration
matrix: a sparse LU factorisation, for its fixed pattern and one pivot order, written out as
C without a loop or an index list, compiled and cached like the explicit method's Schur code
(:mod:`linkdyn.solve.generated`, whose ``LINKDYN_GENERATED_CODE`` and
``LINKDYN_GENERATED_MAX_SOURCE`` settings it follows).

A sweep solves two systems with Phi_q at every position (Newton's step at the predictor, and
the velocities and accelerations at the solution). KLU's refactorisation of a crank-rocker's
12 x 12 Jacobian takes some 4,000 instructions, its scaling 1,250 more and a solve 900: the
bookkeeping of a general sparse code around some 200 floating-point operations. The code
written here does those operations alone:

* the pivot order is KLU's, from a fresh factorisation of the equilibrated Phi_q at the
  sweep's first position (:meth:`KinematicSweep.pivot_order`); the fill of the elimination in
  that order is found once, symbolically, and each entry of L and U gets a fixed place; a
  pattern keeps up to MAX_ORDERS orders, and a sweep takes one whose pivots serve its start;
* ``ldk_factor`` equilibrates the values (each row, then each column, scaled to a largest
  entry of 1, as the sweep's KLU path does), eliminates without further pivoting and returns
  the pivot ratio ``min |u_kk| / max |u_kk|`` with the sign of det Phi_q (the pivots' signs
  and the order's parity);
* ``ldk_solve`` solves Phi_q x = b with those factors (scales and permutations included);
* ``ldk_residual`` forms ``b - Phi_q x`` and ``|b| + |Phi_q| |x|`` row by row, the terms of
  a row in increasing column order: the iterative refinement's residuals and backward-error
  scales, the same numbers as the sweep's loop over its index lists gives.

A fixed pivot order is as good as KLU's refactorisation, which keeps its pivots too, while
the pivots stay large: the sweep takes the straight-line factors while the pivot ratio
exceeds 1e-6 for Newton's steps and 1e-2 at a solution (where the ratio is then the recorded
condition estimate, as KLU's is above 1e-2); below, near a singular configuration or a limit
position, it factorises with KLU and fresh pivots and estimates the condition number as
before (``stats["generated_factorizations"]`` of ``stats["factorizations"]`` were the
straight-line code's). Velocities and accelerations are refined against Phi_q's values
either way, so the results agree with KLU's to the sweep's tolerance, not to the bit.

Runs with ``method="bdf"`` get the same for the iteration matrix G = [M - ..., Phi_q^T;
Phi_q, -R] (:func:`attach_integrator`; csrc/ld_linear.c): the pivot order of KLU's
factorisation of the KKT matrix at the start, rows scaled as KLU scales them, the code's
factors kept while their pivot ratio stays at or above eps^(2/3), KLU's threshold for
keeping old pivots (then KLU with fresh pivots). On Jansen's benchmark at rtol 1e-8 the
BDF's loop takes 556 M instructions instead of 789 M (its source, 85,000 characters,
compiles in about a second, once per machine); spatial models' iteration matrices fill
beyond the size limit and keep KLU. The default method's rare BDF stretches keep KLU too:
code is built only for runs that ask for the BDF.
"""

from __future__ import annotations

import threading

from ..errors import ArgumentError
from . import generated

#: The source's functions, in the order ``KinematicSweep.set_lu_code`` takes them.
FUNCTIONS = ("ldk_factor", "ldk_solve", "ldk_residual")

#: Statements in one of the source's functions (gcc's time grows faster than linearly in a
#: function's length; cut, it stays linear, as for the Schur code).
PART = 400

#: Characters each of Phi_q's entries takes at least in the source (its copy into the factors,
#: its share of a row's and a column's scale): a lower bound of the source's length that
#: turns a large pattern down before its elimination is worked out.
CHARS_PER_ENTRY = 50

#: Pivot orders kept for one pattern of Phi_q, and the share of a fresh order's pivot ratio
#: at a sweep's start with which one serves it: a sweep takes the first kept order that
#: reaches START_FRACTION of what KLU's fresh pivots give there, else its own start's order
#: is compiled (while fewer than MAX_ORDERS are kept, and unless it is one of them), else
#: the best of them. (One order served every sweep of a pattern before: a four-bar of
#: another shape whose configurations made its pivots small ran on KLU throughout, 0 of
#: 1,602 factorisations by the code. Against a fixed ratio of 1e-2 instead, sweeps starting
#: near a limit position, where no order reaches it, filled the slots with orders of their
#: own.)
MAX_ORDERS = 4
START_FRACTION = 0.1

#: (compiler command, pattern signature, size limit, functions) -> (library, signature,
#: addresses, size of the factors) of the first pivot order met, or why there is none;
#: _orders: the further orders kept (kinematic sweeps).
_seen: dict[tuple, tuple | str] = {}
_orders: dict[tuple, list] = {}
_lock = threading.Lock()


def attach(sweep, t: float, q) -> str:
    """Give ``sweep`` (a :class:`linkdyn._kinematics.KinematicSweep`) straight-line LU code
    where the mode allows and it can be built, its pivot order from Phi_q at (t, q) if none
    was made for the pattern before; returns ``sweep.lu_kernels`` ("generated" or "klu")."""
    found, key = _code_for(sweep, t, q, "the kinematic sweep", FUNCTIONS)
    if not isinstance(found, str) and not _best_order(sweep, t, q, key, found):
        _refused("the kinematic sweep")
    return sweep.lu_kernels


def _set_sweep(sweep, entry) -> bool:
    lib, signature, (factor, solve, residual), size = entry
    return sweep.set_lu_code(factor, solve, residual, size, signature)


def _best_order(sweep, t, q, key, first) -> bool:
    """Set on ``sweep`` the kept order that serves its start (see MAX_ORDERS), compiling
    this start's own where none does; False where the code was refused."""
    with _lock:
        entries = [first] + _orders.get(key, [])
    wanted = START_FRACTION * sweep.fresh_pivot_ratio(t, q)
    best, ratio = None, -1.0
    for entry in entries:
        if not _set_sweep(sweep, entry):
            return False
        r = sweep.code_pivot_ratio(t, q)
        if r >= wanted:
            return True
        if r > ratio:
            best, ratio = entry, r
    if len(entries) < MAX_ORDERS:
        new = _build(sweep, t, q, list(key[0]) or None, key[2], FUNCTIONS)
        if not isinstance(new, str) and all(new[2] != e[2] for e in entries):
            with _lock:
                _orders.setdefault(key, []).append(new)
            if not _set_sweep(sweep, new):
                return False
            if sweep.code_pivot_ratio(t, q) >= ratio:
                return True
    return _set_sweep(sweep, best)


def attach_integrator(integ, t: float, q) -> str:
    """The same for a :class:`linkdyn._bdf.BDFIntegrator`: code for the pattern of its
    iteration matrix G (and of K, the same slots), its pivot order from K at (t, q); returns
    ``integ.lu_kernels``. The BDF then factorises G with it (``stats["lu_kernels"]``,
    ``stats["generated_factorizations"]``)."""
    found, _ = _code_for(integ, t, q, "the BDF's iteration matrix", FUNCTIONS[:2])
    if not isinstance(found, str):
        lib, signature, (factor, solve), size = found
        if not integ.set_lu_code(lib, factor, solve, size, signature):
            _refused("the BDF's iteration matrix")
    return integ.lu_kernels


def _refused(what):
    if generated.mode() == "require":
        raise ArgumentError(f"LINKDYN_GENERATED_CODE=require: no straight-line LU code for "
                            f"{what}: the compiled code's signature is not the pattern's")


def _code_for(target, t, q, what, functions):
    """(The compiled code for ``target``'s pattern (a sweep or an integrator: pattern(),
    pattern_signature(), pivot_order(t, q)) or why there is none (ArgumentError with
    ``LINKDYN_GENERATED_CODE=require``), the key it is kept under or None)."""
    how = generated.mode()
    key = None
    if how == "off":
        return "LINKDYN_GENERATED_CODE=off", key
    limit = generated.max_source()
    n, colptr, rowind = target.pattern()
    if n == 0:
        found = "the model has no coordinates"
    elif CHARS_PER_ENTRY * len(rowind) > limit:
        found = _too_large(limit)
    else:
        cmd = generated.compiler()
        key = (tuple(cmd or ()), target.pattern_signature(), limit, functions)
        with _lock:
            found = _seen.get(key)
        if found is None:
            found = _build(target, t, q, cmd, limit, functions)
            if found is not _NO_ORDER:  # a pivot order not found here may be found elsewhere
                with _lock:
                    _seen[key] = found
            else:
                found = f"the matrix does not factor at the start (t = {t:g})"
    if isinstance(found, str) and how == "require":
        raise ArgumentError(f"LINKDYN_GENERATED_CODE=require: no straight-line LU code for "
                            f"{what}: {found}")
    return found, key


def _too_large(limit) -> str:
    return (f"its LU factorisation is more than {limit:,} characters of C (MAX_SOURCE, or "
            "LINKDYN_GENERATED_MAX_SOURCE)")


#: _build's answer where the matrix does not factor at the given start (not kept: another
#: start may do)
_NO_ORDER = "no pivot order"


def _build(target, t, q, cmd, limit, functions) -> tuple | str:
    if cmd is None:
        return "no C compiler found (set CC)"
    order = target.pivot_order(t, q)
    if order is None:
        return _NO_ORDER
    n, colptr, rowind = target.pattern()
    source, size = lu_source(n, colptr, rowind, *order, target.pattern_signature(), limit,
                             for_sweep="ldk_residual" in functions)
    if source is None:
        return _too_large(limit)
    try:
        lib, signature, addresses = generated._library(cmd, source, functions,
                                                       "ldk_signature")
    except generated._Unbuildable as exc:
        return str(exc)
    return lib, signature, addresses, size


def elimination(n, colptr, rowind, rows, cols):
    """The symbolic LU of Phi_q's pattern (n x n, compressed columns) eliminated in the pivot
    order ``rows``, ``cols`` (the k-th pivot at row rows[k], column cols[k]): (entries,
    lower, upper), where ``entries`` maps (i, j) of the permuted matrix to the original
    entry's index (or None for fill), ``lower[k]`` lists the rows i > k of L's column k and
    ``upper[k]`` the columns j > k of U's row k. ValueError where a pivot is structurally
    zero (not a pivot order of this pattern)."""
    pinv = [0] * n
    qinv = [0] * n
    for k in range(n):
        pinv[int(rows[k])] = k
        qinv[int(cols[k])] = k
    entries = {}
    for j in range(n):
        for p in range(int(colptr[j]), int(colptr[j + 1])):
            entries[(pinv[int(rowind[p])], qinv[j])] = p
    below = [set() for _ in range(n)]       # column k's rows > k
    right = [set() for _ in range(n)]       # row k's columns > k
    for i, j in entries:
        if i > j:
            below[j].add(i)
        elif j > i:
            right[i].add(j)
    lower, upper = [], []
    for k in range(n):
        if (k, k) not in entries:   # neither in the pattern nor filled by earlier pivots
            raise ValueError(f"pivot {k} is structurally zero in this order")
        lk, uk = sorted(below[k]), sorted(right[k])
        lower.append(lk)
        upper.append(uk)
        for i in lk:
            for j in uk:
                if (i, j) not in entries:
                    entries[(i, j)] = None
                    if i > j:
                        below[j].add(i)
                    elif j > i:
                        right[i].add(j)
    return entries, lower, upper


def lu_source(n, colptr, rowind, rows, cols, signature, limit, for_sweep=True):
    """(C source of ldk_factor, ldk_solve, ldk_signature, doubles the factors take) for the
    pattern and pivot order (see :func:`elimination`), or (None, 0) where the source would
    be longer than ``limit`` characters. ``for_sweep``: the kinematic sweep's code, with
    ldk_residual, rows and columns equilibrated (as the sweep's KLU path) and values that
    are not finite refused; else the integrator's, whose values its callers have checked,
    with rows scaled as KLU scales them (their largest entries 1)."""
    with_residual = for_sweep
    entries, lower, upper = elimination(n, colptr, rowind, rows, cols)
    slot = {ij: s for s, ij in enumerate(sorted(entries))}
    ns = len(slot)
    factor, solve = [], []
    # row scales, then column scales of the row-scaled values (as _equilibrate)
    by_row = [[] for _ in range(n)]        # (entry, column), columns increasing
    for j in range(n):
        for p in range(int(colptr[j]), int(colptr[j + 1])):
            by_row[int(rowind[p])].append((p, j))
    for i in range(n):
        # z: 0 unless a value is infinite or NaN (x * 0 is NaN for those): then no factors
        if for_sweep:
            terms = "".join(f"m=amax(m,a[{p}]);z+=a[{p}]*0.;" for p, _ in by_row[i])
            factor.append(f"m=0.;z=0.;{terms}rs[{i}]=m>0.?1./m:1.;"
                          "if(z!=0.)return nonfinite(st);")
        else:
            terms = "".join(f"m=amax(m,a[{p}]);" for p, _ in by_row[i])
            factor.append(f"m=0.;{terms}rs[{i}]=m>0.?1./m:1.;")
    for j in range(n if for_sweep else 0):
        terms = "".join(f"m=amax(m,a[{p}]*rs[{int(rowind[p])}]);"
                        for p in range(int(colptr[j]), int(colptr[j + 1])))
        factor.append(f"m=0.;{terms}cs[{j}]=m>0.?1./m:1.;")
    for (i, j), s in slot.items():
        p = entries[(i, j)]
        if p is None:
            factor.append(f"lu[{s}]=0.;")
        else:
            factor.append(f"lu[{s}]=a[{p}]*rs[{int(rows[i])}]*cs[{int(cols[j])}];" if for_sweep
                          else f"lu[{s}]=a[{p}]*rs[{int(rows[i])}];")
    for k in range(n):
        factor.append(f"if(!pivot(lu[{slot[(k, k)]}],st))return 0;")
        for i in lower[k]:
            factor.append(f"lu[{slot[(i, k)]}]/=lu[{slot[(k, k)]}];")
        for i in lower[k]:
            for j in upper[k]:
                factor.append(f"lu[{slot[(i, j)]}]-=lu[{slot[(i, k)]}]*lu[{slot[(k, j)]}];")
    for k in range(n):
        solve.append(f"w[{k}]=x[{int(rows[k])}]*rs[{int(rows[k])}];")
    for k in range(n):
        for i in lower[k]:
            solve.append(f"w[{i}]-=lu[{slot[(i, k)]}]*w[{k}];")
    for k in range(n - 1, -1, -1):
        for j in upper[k]:
            solve.append(f"w[{k}]-=lu[{slot[(k, j)]}]*w[{j}];")
        solve.append(f"w[{k}]/=lu[{slot[(k, k)]}];")
    for k in range(n):
        solve.append(f"x[{int(cols[k])}]=w[{k}]*cs[{int(cols[k])}];" if for_sweep
                     else f"x[{int(cols[k])}]=w[{k}];")
    residual = []
    for i in range(n if with_residual else 0):
        terms = "".join(f"ax=a[{p}]*x[{j}];m-=ax;d+=fabs(ax);" for p, j in by_row[i])
        residual.append(f"m=b[{i}];d=fabs(m);{terms}r[{i}]=m;dn[{i}]=d;")
    parity = _parity(rows) * _parity(cols)
    out = [_HEAD.format(n=n, ns=ns, sig=int(signature)), _prologue(ns, n)]
    total = sum(map(len, out)) + sum(len(x) + 2 for x in factor + solve + residual)
    if total > limit:
        return None, 0
    fparts = _parts(out, factor, "static int ldk_f{k}(const double *restrict a, "
                    "double *restrict lu, double *restrict st)", "int")
    sparts = _parts(out, solve, "static void ldk_s{k}(const double *restrict lu, "
                    "double *restrict x, double *restrict w)", "void")
    rparts = with_residual and _parts(
        out, residual, "static void ldk_r{k}(const double *restrict a, const double "
        "*restrict x, const double *restrict b, double *restrict r, double *restrict dn)",
        "void", locals_="double m, d, ax; (void)m; (void)d; (void)ax;")
    out.append("double ldk_factor(const double *a, double *lu, int *sign)\n{\n"
               "    double st[4] = {0.0, HUGE_VAL, 0.0, 0.0};\n")
    for k in range(fparts):
        out.append(f"    if (!ldk_f{k}(a, lu, st)) return st[3];\n")
    out.append(f"    *sign = st[2] != 0.0 ? {-parity} : {parity};\n"
               "    return st[1] / st[0];\n}\n\n")
    out.append("void ldk_solve(const double *lu, double *x, double *w)\n{\n")
    for k in range(sparts):
        out.append(f"    ldk_s{k}(lu, x, w);\n")
    out.append("}\n")
    if with_residual:
        out.append("\nvoid ldk_residual(const double *a, const double *x, const double *b, "
                   "double *r, double *dn)\n{\n")
        for k in range(rparts):
            out.append(f"    ldk_r{k}(a, x, b, r, dn);\n")
        out.append("}\n")
    source = "".join(out)
    if len(source) > limit:
        return None, 0
    return source, ns + 2 * n


def _parts(out, statements, header, kind, locals_="LDK_LOCALS") -> int:
    """Append ``statements`` to ``out`` as functions of PART statements each; returns how
    many."""
    count = 0
    for lo in range(0, max(len(statements), 1), PART):
        body = "".join(f" {x}\n" for x in statements[lo:lo + PART])
        tail = "    return 1;\n" if kind == "int" else ""
        out.append(f"{header.format(k=count)}\n{{\n    {locals_}\n{body}{tail}}}\n\n")
        count += 1
    return count


def _prologue(ns, n) -> str:
    return (f"#define LDK_LOCALS double *rs = (double *)lu + {ns}, *cs = (double *)lu + "
            f"{ns + n}; double m = 0.0, z = 0.0; (void)rs; (void)cs; (void)m; (void)z;\n\n")


def _parity(perm) -> int:
    """+1 for an even permutation, -1 for an odd one."""
    seen = [False] * len(perm)
    sign = 1
    for i in range(len(perm)):
        length, j = 0, i
        while not seen[j]:
            seen[j] = True
            j = int(perm[j])
            length += 1
        if length and length % 2 == 0:
            sign = -sign
    return sign


_HEAD = """/* Straight-line LU factorisation and solve of a {n} x {n} Jacobian pattern in one pivot
 * order (linkdyn.solve.lu_code). Factors: {ns} entries of L and U, then the row and column
 * scales. */
#include <math.h>

unsigned long long ldk_signature(void) {{ return {sig}ULL; }}

static inline double amax(double m, double x)
{{
    x = fabs(x);
    return x > m ? x : m;
}}

/* A value that is not finite: no factors (the return is NaN). */
static int nonfinite(double *st)
{{
    st[3] = NAN;
    return 0;
}}

/* A pivot d: st <- (largest |d|, smallest |d|, odd count of negative ones, d); 0 where d is
 * zero or not finite (st[3] then holds |d|: 0 or NaN, the factorisation's return). */
static inline int pivot(double d, double *st)
{{
    double m = fabs(d);
    if (!(m > 0.0) || m == HUGE_VAL) {{
        st[3] = m == HUGE_VAL ? 0.0 : m;
        return 0;
    }}
    if (m > st[0]) st[0] = m;
    if (m < st[1]) st[1] = m;
    if (d < 0.0) st[2] = st[2] != 0.0 ? 0.0 : 1.0;
    return 1;
}}

"""
