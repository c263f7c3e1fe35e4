"""Design: what a mechanism designer asks of a linkage beyond its motion. :mod:`.metrics`:
Grashof's classification, transmission angles, dead centres, limit positions, mechanical
advantage, coupler-curve features and input torques (:mod:`.report` gathers them);
:mod:`.sensitivity`: exact derivatives of a kinematic analysis with respect to named design
parameters; :mod:`.dynamic_sensitivity`: forward sensitivities of a simulation;
:mod:`.synthesis`: dimensional synthesis by least squares with those derivatives."""

from .metrics import (CouplerCurve, Grashof, Position, coupler_curve, dead_centres, grashof,
                      input_torque, limit_positions, mechanical_advantage, transmission_angle)
from .report import CycleMetrics, cycle_metrics
from .sensitivity import KinematicSensitivities, kinematic_sensitivities
from .dynamic_sensitivity import SimulationSensitivities, simulation_sensitivities
from .synthesis import (SynthesisResult, fourbar_lengths, function_generation,
                        motion_generation, path_generation)

__all__ = ["Grashof", "grashof", "transmission_angle", "mechanical_advantage",
           "limit_positions", "dead_centres", "Position", "coupler_curve", "CouplerCurve",
           "input_torque", "CycleMetrics", "cycle_metrics", "KinematicSensitivities",
           "kinematic_sensitivities", "SimulationSensitivities", "simulation_sensitivities",
           "SynthesisResult", "fourbar_lengths",
           "path_generation", "function_generation", "motion_generation"]
