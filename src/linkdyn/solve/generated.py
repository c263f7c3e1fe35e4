"""Straight-line code for the explicit method's Schur factorisation: the C core writes its plan
out as C (csrc/ld_schur_gen.c), this module compiles it with the platform's C compiler, keeps
the shared library in a cache and puts its functions in the plan's place.

The plan's loops spend two thirds of a factorisation on reading indices from lists; the
straight-line code has them as constants and does the same operations in the same order, so
the factors, and the run, are the same (to the bit where the compiler contracts no
multiply-adds differently). On the Jansen linkage a right-hand side takes 10.9 k
instructions instead of 25.4 k (``benchmarks/test_bench_instructions.py``).

Set ``LINKDYN_GENERATED_CODE`` to choose:

``auto`` (default)
    Straight-line code where a C compiler is found and the plan is at most
    :data:`MAX_SOURCE` characters of C (small models: the Jansen linkage's is 42,000, a
    planar chain of 20 bars' 46,000, Bricard's spatial loop's 75,000); else the plan's
    loops, silently.
``off``
    Always the plan's loops.
``require``
    Straight-line code or an :class:`~linkdyn.errors.ArgumentError` that says why not.

``LINKDYN_GENERATED_MAX_SOURCE`` (characters, default :data:`MAX_SOURCE`) moves the size
limit: a larger model's plan compiles in about a second per 100,000 characters, once per
machine, which pays where its runs are long or many.

The compiler is ``$CC`` or the one Python was built with; the libraries are kept in
``$LINKDYN_CACHE_DIR`` (default ``$XDG_CACHE_HOME/linkdyn`` or ``~/.cache/linkdyn``), named by
a hash of the source and the compiler command, and written under a temporary name then
renamed, so concurrent processes (a sweep's pool) share them safely. A library is loaded
once per process. The run's ``stats["schur_kernels"]`` says which code it ran.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from pathlib import Path

from ..errors import ArgumentError

#: Longest source compiled, in characters (some 25 a statement): gcc -O1 builds about
#: 100,000 characters a second of it (the Jansen linkage's 42,000 in 0.4 s, Bricard's
#: mechanism's 75,000 in 0.8 s, a chain of 60 bars' 144,000 in 1.4 s), once per model and
#: machine. Larger plans keep the loops.
MAX_SOURCE = 100_000

#: Seconds the compiler may take before the plan's loops are used instead.
COMPILE_TIMEOUT = 120.0

MODES = ("auto", "off", "require")

#: The functions of the source, in the order ``BDFIntegrator.set_schur_code`` takes them.
FUNCTIONS = ("ldg_add", "ldg_elim", "ldg_solve", "ldg_jt", "ldg_j", "ldg_jm")

_loaded: dict[Path, tuple] = {}     # path -> (library, signature, function addresses)
#: (compiler command, plan signature, size limit) -> what _loaded holds for its code, or why there is
#: none. Signatures are 64-bit hashes of the plan's arrays (csrc/ld_schur_gen.c): two plans
#: met in one process share one with a probability of about 2^-64.
_seen: dict[tuple, tuple | str] = {}
_lock = threading.Lock()


def max_source() -> int:
    """The ``LINKDYN_GENERATED_MAX_SOURCE`` setting, else MAX_SOURCE (ArgumentError for one
    that is not a positive whole number)."""
    text = os.environ.get("LINKDYN_GENERATED_MAX_SOURCE", "").strip().replace("_", "")
    if not text:
        return MAX_SOURCE
    if not text.isdigit() or int(text) <= 0:
        raise ArgumentError("LINKDYN_GENERATED_MAX_SOURCE must be a positive whole number "
                            f"of characters, got {text!r}")
    return int(text)


def mode() -> str:
    """The ``LINKDYN_GENERATED_CODE`` setting (ArgumentError for an unknown one)."""
    value = os.environ.get("LINKDYN_GENERATED_CODE", "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ArgumentError(f"LINKDYN_GENERATED_CODE must be one of {', '.join(MODES)}, "
                            f"got {value!r}")
    return value


def compiler() -> list[str] | None:
    """The C compiler's command with the flags for a shared library and ``$CFLAGS`` (those
    the extensions were built with, e.g. a sanitizer's: ci/sanitize.sh), or None."""
    env = os.environ
    found = _compiler(env.get("CC") or sysconfig.get_config_var("CC") or "cc",
                      env.get("CFLAGS", ""), env.get("PATH", ""))
    return None if found is None else list(found)


@functools.lru_cache(maxsize=16)
def _compiler(cc: str, cflags: str, path: str) -> tuple | None:
    argv = shlex.split(cc)
    if not argv or shutil.which(argv[0], path=path or None) is None:
        return None
    # -O1: within a few percent of -O2's instructions on this code, in half the time
    return (*argv, "-std=c99", "-O1", "-fPIC", "-shared", *shlex.split(cflags))


def cache_dir() -> Path:
    """Where the compiled libraries are kept (see the module's docstring)."""
    if os.environ.get("LINKDYN_CACHE_DIR"):
        root = Path(os.environ["LINKDYN_CACHE_DIR"])
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        root = Path(base) / "linkdyn"
    return root / "schur"


def attach(integ) -> str:
    """Put straight-line Schur code in ``integ``'s plan's place where the mode allows and it
    can be built; returns ``integ.schur_kernels`` ("generated" or "plan"). A plan met before
    in the process (its signature) takes its code, or its reason for none, from memory: no
    source is written out again (writing Jansen's took 1.1 ms, a third of a 1 s run). A plan
    whose source cannot be short enough (a lower bound of its length, found at once) is
    turned down before it is hashed (0.04 ms at 20,000 bars, 20 ms hashing it)."""
    how = mode()
    if how == "off":
        return integ.schur_kernels
    limit, bound = max_source(), integ.schur_size_bound()
    if bound < 0:
        found = "the run has no Schur plan (no explicit method or no constraint rows)"
    elif bound > limit:     # a large model: turned down before its plan is hashed
        found = _too_large(limit)
    else:
        cmd = compiler()
        key = (tuple(cmd or ()), integ.schur_signature(), limit)
        if key not in _seen:
            _seen[key] = _build(integ, cmd, limit)
        found = _seen[key]
    if not isinstance(found, str) and not integ.set_schur_code(*found):
        found = "the compiled code's signature is not the plan's"
    if isinstance(found, str) and how == "require":
        raise ArgumentError(f"LINKDYN_GENERATED_CODE=require: no straight-line Schur code: "
                            f"{found}")
    return integ.schur_kernels


def _build(integ, cmd, limit) -> tuple | str:
    """(library, signature, addresses) of the code for ``integ``'s plan, or why there is
    none."""
    if cmd is None:
        return "no C compiler found (set CC)"
    source = integ.schur_source(limit)
    if not source:
        return _too_large(limit)
    try:
        return _library(cmd, source)
    except _Unbuildable as exc:
        return str(exc)


def _too_large(limit) -> str:
    return (f"its plan is more than {limit:,} characters of C (MAX_SOURCE, or "
            "LINKDYN_GENERATED_MAX_SOURCE)")


class _Unbuildable(Exception):
    """The straight-line code cannot be built here (the message says why)."""


def library_path(cmd: list[str], source: str) -> Path:
    """Where the library compiled from ``source`` by ``cmd`` is kept: named by a hash of
    both."""
    key = hashlib.sha256("\0".join(cmd + [source]).encode()).hexdigest()[:32]
    return cache_dir() / f"ldg_{key}{sysconfig.get_config_var('SHLIB_SUFFIX') or '.so'}"


def _library(cmd: list[str], source: str, functions=FUNCTIONS,
             signature: str = "ldg_signature") -> tuple:
    """(library, signature, function addresses) for ``source``, whose function
    ``signature`` returns its 64-bit signature and which defines ``functions``: loaded
    before, in the cache, or compiled now."""
    path = library_path(cmd, source)
    with _lock:
        if path in _loaded:
            return _loaded[path]
        if not path.exists():
            _compile(cmd, source, path)
            entry = _load(path, functions, signature)
        else:
            try:
                entry = _load(path, functions, signature)
            except _Unbuildable:
                # a damaged cache entry (a truncated file, a stray one): built again, once
                _compile(cmd, source, path)
                entry = _load(path, functions, signature)
        _loaded[path] = entry
        return entry


def _load(path: Path, functions, signature: str) -> tuple:
    try:
        lib = ctypes.CDLL(str(path))
        getattr(lib, signature).restype = ctypes.c_ulonglong
        return (lib, int(getattr(lib, signature)()),
                tuple(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                      for name in functions))
    except (OSError, AttributeError) as exc:
        raise _Unbuildable(f"cannot load {path}: {exc}") from None


def _compile(cmd: list[str], source: str, path: Path) -> None:
    """Compile ``source`` into the shared library ``path`` (written whole or not at all)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _Unbuildable(f"cannot create the cache {path.parent}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="linkdyn-schur-") as tmp:
        c_file = os.path.join(tmp, "schur.c")
        built = os.path.join(tmp, "schur" + path.suffix)
        with open(c_file, "w", encoding="ascii") as f:
            f.write(source)
        try:
            done = subprocess.run(cmd + [c_file, "-o", built], capture_output=True, text=True,
                                  timeout=COMPILE_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise _Unbuildable(f"the C compiler {cmd[0]} failed: {exc}") from None
        if done.returncode != 0:
            raise _Unbuildable(f"the C compiler {cmd[0]} failed: "
                               f"{done.stderr.strip()[-500:]}")
        try:
            # a temporary name beside the target, then one rename: never half a library
            fd, staged = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            os.close(fd)
            shutil.copyfile(built, staged)
            os.replace(staged, path)
        except OSError as exc:
            raise _Unbuildable(f"cannot write {path}: {exc}") from None
