"""Model exchange: models written in other formats read into linkdyn models (URDF with its
loop joints, :mod:`.urdf`; SDFormat, :mod:`.sdf`; MJCF, :mod:`.mjcf`), each reader in its
own module over a safe XML reader (:mod:`.xml`), the frames the formats share
(:mod:`.geometry`) and the builder calls they all end in (:mod:`.assemble`); and spatial
models written out as MJCF or URDF (:mod:`.write`: :func:`save_mjcf`, :func:`save_urdf`).

:func:`example` gives the path of a model file shipped for the tutorials:
``"fourbar_loop.urdf"``, a four-bar written as a URDF tree closed by a loop joint."""

from importlib import resources

from ..errors import UnknownNameError
from .mjcf import load_mjcf
from .sdf import load_sdf
from .urdf import load_urdf
from .write import save_mjcf, save_urdf

__all__ = ["example", "load_mjcf", "load_sdf", "load_urdf", "save_mjcf", "save_urdf"]

#: The model files shipped in ``linkdyn/exchange/data``.
EXAMPLES = ("fourbar_loop.urdf",)


def example(name: str) -> str:
    """The path of the shipped example model file ``name`` (one of :data:`EXAMPLES`)."""
    if name not in EXAMPLES:
        raise UnknownNameError(f"no example model file {name!r} (examples: "
                               f"{', '.join(EXAMPLES)})")
    return str(resources.files(__name__).joinpath("data", name))
