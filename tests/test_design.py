"""Design metrics (linkdyn.design): Grashof's classification of four-bars, and the
transmission angle along a motion against the closed form of a crank-rocker."""

import math

import numpy as np
import pytest

import linkdyn
from linkdyn.design import grashof, transmission_angle

from conftest import fourbar_builder


@pytest.mark.parametrize("lengths, kind", [
    ((4.0, 1.0, 4.0, 3.0), "crank-rocker"),      # ground, input, coupler, output
    ((4.0, 3.0, 4.0, 1.0), "crank-rocker"),      # the output is the crank
    ((1.0, 3.0, 4.0, 3.5), "double-crank"),      # shortest link fixed: a drag link
    ((4.0, 3.0, 1.0, 3.5), "double-rocker"),     # Grashof, shortest link the coupler
    ((4.0, 2.0, 4.0, 2.0), "change-point"),      # a parallelogram: s + l = p + q
    ((2.0, 3.0, 4.0, 6.0), "triple-rocker"),     # not Grashof: 2 + 6 > 3 + 4
])
def test_grashof_classes(lengths, kind):
    g = grashof(*lengths)
    assert g.kind == kind
    s, p, q, l = sorted(lengths)
    assert g.grashof == (s + l < p + q) and math.isclose(g.margin, (p + q) - (s + l),
                                                         abs_tol=1e-12)


def test_grashof_refuses_lengths_that_are_not_positive():
    with pytest.raises(linkdyn.ArgumentError, match="coupler length"):
        grashof(1.0, 1.0, -2.0, 1.0)


def test_transmission_angle_of_a_crank_rocker_is_the_closed_form():
    # The crank-rocker of conftest (ground d = 0.4, crank a = 0.1, coupler b = 0.35, rocker
    # c = 0.3) driven through a turn: at crank angle theta the angle mu at the
    # coupler-rocker pin satisfies b^2 + c^2 - 2 b c cos(mu) = a^2 + d^2 - 2 a d cos(theta)
    # (both are the diagonal from the crank pin to the rocker's pivot), and its extremes are
    # at theta = 0 and pi.
    a, b, c, d = 0.1, 0.35, 0.3, 0.4
    builder = fourbar_builder(crank=a, coupler=b, rocker=c, base=d, theta=1.0)
    builder.add_angle_driver("drive", "O_crank", linkdyn.laws.linear(-1.0, -2 * math.pi))
    model = builder.build()
    assert grashof(d, a, b, c).kind == "crank-rocker"
    k = linkdyn.kinematics(model, np.linspace(0.0, 1.0, 721))
    mu = transmission_angle(k, "B")
    theta = k.body_angle("crank")
    exact = np.arccos((b * b + c * c - a * a - d * d + 2 * a * d * np.cos(theta)) / (2 * b * c))
    np.testing.assert_allclose(mu, exact, atol=1e-10)
    extremes = np.arccos([(b * b + c * c - (d - a) ** 2) / (2 * b * c),
                          (b * b + c * c - (d + a) ** 2) / (2 * b * c)])
    assert abs(mu.min() - extremes[0]) < 1e-4 and abs(mu.max() - extremes[1]) < 1e-4


def test_transmission_angle_names_a_bad_joint():
    k = linkdyn.kinematics("jansen_driven", np.linspace(0.0, 0.1, 3))
    with pytest.raises(linkdyn.UnknownNameError, match="no joint 'nope'"):
        transmission_angle(k, "nope")
    ground_joint = next(j.name for j in k.model.description.joints
                        if "ground" in (j.first[0], j.second[0]))
    with pytest.raises(linkdyn.ArgumentError, match="between two moving links"):
        transmission_angle(k, ground_joint)
