"""Checks of user-given numbers shared by the description, the laws and the element
families: one place that says what a real number of a model is."""

from __future__ import annotations

import math
import os

import numpy as np

from .errors import ArgumentError, ArgumentTypeError, ModelError, ModelFileError


def real(entry: str, what: str, value, *, positive: bool = False,
         nonnegative: bool = False) -> float:
    """``value`` as a finite float, or :class:`ModelError` naming ``entry`` and ``what``:
    not a number (booleans are not numbers), too large for a float, not finite, and, when
    asked, not positive or negative."""
    if type(value) is float and math.isfinite(value) and (
            not positive or value > 0.0) and (not nonnegative or value >= 0.0):
        return value            # the common case, first
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(f"{entry}: {what} must be a real number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:
        raise ModelError(f"{entry}: {what} is too large for a float (an integer of "
                         f"{len(str(abs(value)))} digits)") from None
    if not math.isfinite(value):
        raise ModelError(f"{entry}: {what} must be finite, got {value!r}")
    if positive and value <= 0.0:
        raise ModelError(f"{entry}: {what} must be positive, got {value!r}")
    if nonnegative and value < 0.0:
        raise ModelError(f"{entry}: {what} must be zero or positive, got {value!r}")
    return value


#: Largest iteration count, number of starts or similar count an option takes (a C int).
MAX_COUNT = 2**31 - 1


def checked_flag(name: str, value) -> bool:
    """``value`` as a bool, or ArgumentTypeError naming ``name``: True or False only (an
    array's truth value is ambiguous and a number is not a switch)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")


def checked_choice(name: str, value, choices) -> str:
    """``value`` when it is one of the strings ``choices``, else ArgumentError (or
    ArgumentTypeError for what is not a string) naming ``name`` and the choices."""
    listed = list(map(repr, choices))
    what = (" or ".join(listed) if len(listed) <= 2 else
            f"one of {', '.join(listed[:-1])} or {listed[-1]}")
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be {what}, got {type(value).__name__} "
                                f"{value!r}")
    if value not in choices:
        raise ArgumentError(f"{name} must be {what}, got {value!r}")
    return value


def checked_int(name: str, value, low: int = 0, high: int = MAX_COUNT) -> int:
    """An integer from ``low`` to ``high`` (numpy integers too), or ArgumentError naming
    ``name`` (ArgumentTypeError for what is not an integer: 0.0, "3", True)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be an integer from {low} to {high}, got "
                                f"{value!r}")
    if not low <= value <= high:
        raise ArgumentError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return int(value)


#: Largest model or sweep file read (bytes): a bigger one is refused before it is read.
MAX_INPUT_FILE_BYTES = 1 << 30


def input_file_problem(path) -> str | None:
    """Why ``path`` cannot be read as an input file, or None: it must be a regular file
    (not a directory, a device such as /dev/zero, or a pipe, which would be read without
    end) of at most MAX_INPUT_FILE_BYTES. A path that does not exist is left to open()."""
    import stat

    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a device, pipe or socket): give a JSON file"
    if info.st_size > MAX_INPUT_FILE_BYTES:
        return (f"is {info.st_size / 2**20:.0f} MiB, over the {MAX_INPUT_FILE_BYTES >> 20} "
                "MiB that linkdyn reads")
    return None


def as_file_error(path, where, fn, *args, **kwargs):
    """Call a builder method; its ModelError becomes a ModelFileError at ``where`` in the
    file ``path``."""
    try:
        return fn(*args, **kwargs)
    except ModelError as exc:
        raise ModelFileError(str(exc), path, where, entry=exc.entry) from None


def check_fields(entry: dict, where: str, required: set, optional: set, path):
    if not isinstance(entry, dict):
        raise ModelFileError(f"expected an object, got {type(entry).__name__}", path, where)
    missing = sorted(required - entry.keys())
    if missing:
        raise ModelFileError(f"missing required field(s): {', '.join(missing)}", path, where)
    unknown = sorted(entry.keys() - required - optional)
    if unknown:
        raise ModelFileError(f"unknown field(s): {', '.join(unknown)} (allowed: "
                             f"{', '.join(sorted(required | optional))})", path, where)


def _items(value, n: int):
    """The n items of a list, tuple or 1-d array (numpy scalars as Python numbers), or
    None for anything else: a string, a mapping, another length."""
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim == 1 else None
    if not isinstance(value, (list, tuple)) or len(value) != n:
        return None
    return [x.item() if isinstance(x, np.generic) else x for x in value]


def vec3(entry: str, what: str, value, expected: str = "three numbers (x, y, z)") -> tuple:
    """Three finite numbers, or ModelError naming the entry and saying what was
    ``expected`` (a string such as "1" or a boolean is not a number here either)."""
    if type(value) in (tuple, list) and len(value) == 3:     # the common case, first
        x, y, z = value
        if type(x) is float and type(y) is float and type(z) is float and \
                math.isfinite(x) and math.isfinite(y) and math.isfinite(z):
            return (x, y, z)
    items = _items(value, 3)
    if items is None or any(isinstance(x, bool) or not isinstance(x, (int, float))
                            for x in items):
        raise ModelError(f"{entry}: {what} must be {expected}, got {value!r}")
    return tuple(real(entry, what, x) for x in items)


def mat3(entry: str, what: str, value) -> np.ndarray:
    """A 3 x 3 matrix of finite numbers (three rows of three), or ModelError naming the
    entry."""
    rows = value.tolist() if isinstance(value, np.ndarray) and value.ndim == 2 else value
    rows = _items(rows, 3)
    if rows is None or any(_items(r, 3) is None for r in rows):
        raise ModelError(f"{entry}: {what} must be a 3 x 3 matrix, got {value!r}")
    return np.array([vec3(entry, what, r, "a 3 x 3 matrix of numbers") for r in rows])


def unit_vec3(entry: str, what: str, value) -> tuple:
    """Three finite numbers, not all zero, normalised."""
    v = np.array(vec3(entry, what, value))
    n = float(np.linalg.norm(v))
    if not n > 0:
        raise ModelError(f"{entry}: {what} must be a non-zero vector, got {value!r}")
    return tuple(float(x) for x in v / n)


def checked_path(what: str, path):
    """A file path argument (str or os.PathLike), or ArgumentTypeError: an int would be
    taken by open() for a file descriptor, and written to."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"{what}: path must be a file name (str or os.PathLike), got "
                                f"{path!r}")
    return path
