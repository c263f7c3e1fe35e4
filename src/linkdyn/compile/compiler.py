"""The one compile path: every description, whatever its coordinates, becomes a frozen
:class:`~linkdyn.compile.model.Model` through the same steps.

1. A coordinate family numbers its coordinates and the rows its own kernels evaluate:
   :func:`linkdyn.compile.cartesian.number_bodies` for planar bodies in fully Cartesian
   coordinates, :func:`linkdyn.compile.natural.number_linkage` for spherical and spatial
   linkages in natural coordinates, :func:`linkdyn.compile.spatial.number_spatial` for
   spatial rigid bodies in natural coordinates. Each returns a :class:`~.patterns.Numbering`.
2. The shared steps (:func:`assemble`) number the generic rows after the family's, fix the
   CSC patterns of Phi_q and of the Hessian, compile the force elements and contacts to the
   force kernels' records, and make the law table.
3. The model type of the family is built on these arrays and names.

Nothing after this point looks anything up by name.
"""

from __future__ import annotations

import contextlib
import gc
import warnings

import numpy as np

from ..elements.description import Description, unconnected_bodies
from ..elements.spatial import SpatialDescription
from ..errors import ModelWarning, name_list
from .cartesian import number_bodies
from .model import Model
from .natural import number_linkage
from .angles import plan_angle_rows
from .patterns import Numbering, compile_rows, force_arrays, law_arrays
from .spatial import number_spatial

__all__ = ["compile_model", "compile_linkage", "assemble"]


def compile_model(description) -> Model:
    """Compile a description into a frozen model: a :class:`linkdyn.Description` of planar
    bodies, a :class:`~linkdyn.elements.spatial.SpatialDescription` of spatial bodies, or a
    spherical or spatial :class:`linkdyn.geometric.Linkage` (validated by it)."""
    if isinstance(description, (Description, SpatialDescription)):
        _warn_unconnected(description)
    with _no_cycle_collection():
        if isinstance(description, Description):
            return assemble(number_bodies(description))
        if isinstance(description, SpatialDescription):
            return assemble(number_spatial(description))
        return assemble(number_linkage(description))


@contextlib.contextmanager
def _no_cycle_collection():
    """The cyclic garbage collector paused while a model is compiled: compiling allocates
    small dicts and lists for every body and row (linear forms, terms) and keeps most of
    them until it ends, so the collector's passes found little to free and took a quarter
    of a 10,000-bar spatial chain's compilation (a sixth of a planar chain's: 135 against
    102 us and 48 against 41 us a bar, measured with and without). Reference counting
    still frees what compiling drops; the collector resumes (if it ran before) when the
    compilation ends or fails."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _warn_unconnected(description) -> None:
    """A ModelWarning naming the bodies nothing holds or acts on (valid: they fly freely,
    or fall; but more often a joint that was left out)."""
    free = unconnected_bodies(description)
    if free:
        warnings.warn(f"model {description.name!r}: {'bodies' if len(free) > 1 else 'body'} "
                      f"{name_list(free)} {'have' if len(free) > 1 else 'has'} no joint, "
                      "driver, force element or contact: "
                      f"{'they move' if len(free) > 1 else 'it moves'} freely (under gravity, "
                      "it falls)", ModelWarning, stacklevel=3)


def compile_linkage(linkage) -> Model:
    """A spherical or spatial linkage compiled (what :func:`compile_model` does with it)."""
    return assemble(number_linkage(linkage))


def assemble(n: Numbering) -> Model:
    """The shared compile steps on a family's numbering: patterns, forces, laws, the model."""
    nq = len(n.mass)
    hdiag = np.asarray(n.hdiag, dtype=np.int64)
    hdiag = hdiag.reshape(-1, 2) if hdiag.ndim == 2 else np.repeat(hdiag, 2).reshape(-1, 2)
    nfamily_h, nfamily_entries, nc = len(hdiag), len(n.rows), n.nc
    # Angle rows (gear pairs, racks) after the family's own rows, before the generic ones.
    angle = plan_angle_rows(n.angle_rows, n.nc, n.q0)
    if angle is not None:
        n.rows.extend(angle.entry_rows)
        n.cols.extend(angle.entry_cols)
        n.row_names.extend(row.name for row in angle.rows)
        n.owners.extend(row.owner for row in angle.rows)
        hdiag = np.concatenate([hdiag, angle.hess_pairs])
        nc += len(angle.rows)
    garrays, row_names, owners, nc, slot, hess_slot = compile_rows(
        n.generic, nq, nc, n.rows, n.cols, n.row_names, n.owners, hdiag)
    family = n.family_arrays(slot, hess_slot[:nfamily_h])
    if angle is not None:
        family.update(angle.arrays(
            slot[nfamily_entries:nfamily_entries + len(angle.entry_rows)],
            hess_slot[nfamily_h:]))
    laws = list(n.laws)

    def add_law(law):
        laws.append(law)
        return len(laws) - 1

    if n.compile_forces is not None:
        farrays, finfo = n.compile_forces(add_law, nq)
    else:
        farrays, finfo = force_arrays(n.force_description, n.body_index, n.local_of,
                                      n.ground, add_law, nq, n.q0)
    arrays = dict(**farrays, nc=nc, mass=n.mass, q_applied=n.q_applied,
                  **family, **garrays, **law_arrays(laws),
                  q0=n.q0, v0=n.v0, hold=n.hold, marker_body=n.marker_body,
                  marker_local=n.marker_local)
    names = dict(**n.names, force_info=finfo, coordinates=tuple(n.coordinates),
                 constraints=tuple(row_names), owners=tuple(owners))
    return n.model_type(n.description, arrays, names, *n.model_args, compiler=compile_model)
