"""A model as a function of named scalar parameters (:class:`ParameterFamily`): what the
sensitivities (linkdyn.design.sensitivity, linkdyn.design.dynamic_sensitivity) difference
and what a synthesis (linkdyn.design.synthesis) moves. A parameter is a path into the
model's file form (:mod:`linkdyn.describe.parameters`) or, for a
:class:`linkdyn.geometric.Linkage`, into its linkage file."""

from __future__ import annotations

import math

import numpy as np

from ..compile.compiler import compile_model
from ..compile.model import Model
from ..describe import geometric, modelfile
from ..describe.parameters import get_parameter, inertia_entry, with_parameters
from ..errors import ArgumentError, ArgumentTypeError, ModelError
from ..models import as_model

__all__ = ["ParameterFamily", "PARAMETER_STEP"]


#: Relative step of the parameter differences (times max(1, abs(value))).
PARAMETER_STEP = 1e-3


class ParameterFamily:
    """A model as a function of named scalar parameters: its file form (a model file or a
    linkage file) and how to compile it with parameters changed. ``model(values)`` compiles
    the member with the parameters set to ``values``."""

    def __init__(self, source, parameters):
        if isinstance(source, geometric.Linkage):
            self.linkage, self.data, self.base = True, geometric.to_dict(source), source.build()
        else:
            self.base = as_model(source)
            description = self.base.description
            self.linkage = isinstance(description, geometric.Linkage)
            self.data = (geometric.to_dict(description) if self.linkage
                         else modelfile.to_dict(description))
        if isinstance(parameters, str) or not isinstance(parameters, (list, tuple)) or \
                not all(isinstance(p, str) for p in parameters):
            raise ArgumentTypeError("parameters must be a sequence of parameter paths "
                                    "(strings), e.g. ['bodies.L5.length', 'ground.P2.x']")
        self.names = tuple(parameters)
        if not self.names:
            raise ArgumentError("no parameters given")
        if len(set(self.names)) != len(self.names):
            raise ArgumentError("a parameter is named twice")
        values, scales = [], []
        for name in self.names:
            value = get_parameter(self.data, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value):
                raise ArgumentError(f"parameter {name!r} is {value!r}: sensitivities need a "
                                    "path that ends at a number (a component such as "
                                    f"'{name}.x' of a point)")
            values.append(float(value))
            scales.append(_scale(self.data, name, float(value)))
        self.values = np.array(values)
        #: each parameter's size, which its difference step is a fraction of
        self.scales = np.array(scales)

    def source(self, values):
        """The member at ``values`` as the family describes it: a Linkage for a linkage,
        else the compiled model."""
        # only the values that differ from the family's own: a member moves one of them,
        # and each set value copies its entry of the file form
        data = with_parameters(self.data, {name: float(value) for name, value, own
                                            in zip(self.names, values, self.values)
                                            if float(value) != own})
        if self.linkage:
            return geometric.from_dict(data)
        return compile_model(modelfile.from_dict(data, path="<parameters>"))

    def model(self, values) -> Model:
        """The member compiled at ``values`` (one per parameter); it must have the base
        model's coordinates and constraint rows."""
        member = self.source(values)
        if isinstance(member, geometric.Linkage):
            member = member.build()
        if (member.nq, member.nc) != (self.base.nq, self.base.nc):
            raise ModelError("changing the parameters changed the model's coordinates or "
                             "constraint rows")
        return member

    def shifted(self, j: int, step: float) -> Model:
        """The member with parameter j moved by ``step``."""
        delta = np.zeros(len(self.values))
        delta[j] = step
        return self.moved(delta, self.names[j])

    def moved(self, delta, name: str) -> Model:
        """The member with the parameters moved by ``delta``; ``name`` is what an error
        about it names."""
        member = self.model(self.values + delta)
        # A spatial body's coordinates are its principal axes: where its inertia has equal
        # moments and is not given in principal axes (a diagonal tensor), the axes a small
        # change picks need not be the model's, and the members' coordinates would not mean
        # the model's (linkdyn.elements.spatial.principal_frame).
        axes = getattr(self.base, "principal_axes", None)
        if axes is not None:
            jump = np.abs(member.principal_axes - axes).max(axis=(1, 2))
            if np.any(jump > 0.1):
                body = self.base.body_names[int(np.argmax(jump))]
                entry = inertia_entry(name)
                if entry is not None and entry[0] != entry[1]:
                    raise ModelError(
                        f"parameter {name!r}: a product of inertia of body {body!r}, two of "
                        "whose principal moments are equal: the smallest change of it turns "
                        "the principal axes that the body's coordinates follow by a finite "
                        "angle, so the members' coordinates mean other axes and cannot be "
                        "differenced; sensitivities to it are not available")
                raise ModelError(
                    f"parameter {name!r}: the principal axes of body {body!r} turn "
                    "by a finite angle under a small change of it (equal principal moments "
                    "of an inertia not given in principal axes): give that body's inertia "
                    "as a diagonal tensor in its principal axes")
        return member

    def members(self):
        """(steps, member): each parameter's difference step h (PARAMETER_STEP times its
        scale: max(1, abs(value)), or an inertia tensor's largest entry for one of its
        entries) and ``member(j, step)``, the model with parameter j moved by step,
        compiled once when first asked for (step 0: the base)."""
        steps = PARAMETER_STEP * self.scales
        cache = [{0.0: self.base} for _ in steps]

        def member(j, step):
            if step not in cache[j]:
                cache[j][step] = self.shifted(j, step)
            return cache[j][step]

        return steps, member


def _scale(data, name, value) -> float:
    """A parameter's size: max(1, abs(value)), or for an entry of a spatial body's inertia
    tensor (kg m^2, often far below 1) the tensor's largest entry, so that a step on a
    product of inertia (zero in principal axes) stays a small part of the tensor: a step of
    1e-3 on the heavy top's 0.004 kg m^2 made a member whose mass lay on a plane."""
    if inertia_entry(name) is not None:
        tensor = get_parameter(data, name.rsplit(".", 2)[0])
        entries = [abs(float(x)) for row in tensor for x in
                   (row if isinstance(row, (list, tuple)) else [row])]
        if entries and max(entries) > 0 and all(math.isfinite(x) for x in entries):
            return max(entries)
    return max(1.0, abs(value))
