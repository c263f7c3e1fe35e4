"""Straight-line Schur code (linkdyn.solve.generated, csrc/ld_schur_gen.c): the C compiled
from a model's plan does the plan's operations in the plan's order, so a run with it is the
run with the plan's loops; code for another plan is refused; without a compiler the loops
run, and ``LINKDYN_GENERATED_CODE=require`` says why not."""

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ArgumentError
from linkdyn.solve import generated
from conftest import without_and_with_code

pytestmark = pytest.mark.skipif(generated.compiler() is None, reason="no C compiler")


def run_both(monkeypatch, model, t_end, **kw):
    return without_and_with_code(monkeypatch, linkdyn.simulate, model, t_end, **kw)


@pytest.mark.parametrize("name, t_end, kw", [
    ("jansen", 1.0, {}),                                   # planar, constant entries
    ("heavy_top", 1.0, {}),                                # spatial, natural coordinates
    ("spatial_slider_crank", 0.5, {}),
    ("bricard", 0.5, {"redundant": "allow"}),              # rows switched off
    ("flyball_governor", 0.5, {}),
])
def test_a_run_with_the_straight_line_code_is_the_run_with_the_plans_loops(
        code_cache, monkeypatch, name, t_end, kw):
    """Same steps, same right-hand sides, same trajectory: the same operations in the same
    order give the same numbers (to round-off, allowed for a compiler that contracts
    multiply-adds: 1e-12 of the coordinates, far below the tolerance of 1e-8 that would
    move them if the code did anything else)."""
    model = linkdyn.load_model(name)
    plan, code = run_both(monkeypatch, model, t_end, rtol=1e-8, atol=1e-8, **kw)
    assert plan.stats["schur_kernels"] == "plan"
    assert code.stats["schur_kernels"] == "generated"
    assert code.stats["rk_steps"] > 0 and code.stats["schur_factorizations"] > 0
    assert abs(code.stats["rk_steps"] - plan.stats["rk_steps"]) <= 1
    scale = max(1.0, float(np.abs(plan.q).max()))
    assert np.abs(code.q - plan.q).max() < 1e-12 * scale * 1e3 ** (plan.stats["steps"] !=
                                                                   code.stats["steps"])
    assert list(code_cache.rglob("ldg_*")), "the library is kept in the cache"


def test_a_dead_centre_is_reported_alike(code_cache, monkeypatch):
    """A crank-rocker's rocker driven towards its extreme, where crank and coupler line up
    and Phi_q loses rank (as in test_simulate.py): the straight-line elimination has no
    pivot test of its own; the checks after it stop the run at the same time, naming the
    same row, as the loops' do."""
    from conftest import dead_centre_errors

    errors = dead_centre_errors(monkeypatch, "rk", ("off", "require"))
    assert isinstance(errors[1], linkdyn.SingularJacobianError)
    assert "the zero pivot is at constraint" in str(errors[1])
    assert str(errors[0]) == str(errors[1])
    assert errors[0].t == pytest.approx(errors[1].t, rel=1e-9)


def test_code_for_another_plan_is_refused(code_cache, monkeypatch):
    """ld_bdf_set_schur_code checks the code's signature against the workspace's plan."""
    integs = []
    attach = generated.attach

    def keep(integ):
        integs.append(integ)
        return attach(integ)

    monkeypatch.setattr(generated, "attach", keep)
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    linkdyn.simulate(linkdyn.load_model("jansen"), 0.01)
    linkdyn.simulate(linkdyn.load_model("spatial_double_pendulum"), 0.01)
    jansen, other = integs
    lib, signature, addresses = generated._library(generated.compiler(),
                                                   jansen.schur_source())
    assert signature == jansen.schur_signature() != other.schur_signature()
    for integ in integs:        # the quick bound a large plan is turned down by is one
        assert 0 < integ.schur_size_bound() <= len(integ.schur_source())
    assert not other.set_schur_code(lib, signature, addresses)
    assert not jansen.set_schur_code(lib, signature ^ 1, addresses)
    assert jansen.set_schur_code(lib, signature, addresses)
    assert other.schur_kernels == "generated"    # its own code, set when it ran


def test_without_a_compiler_the_loops_run_and_require_says_why(code_cache, monkeypatch):
    model = linkdyn.load_model("jansen_driven")
    monkeypatch.setenv("CC", str(code_cache / "no-such-compiler"))
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    r = linkdyn.simulate(model, 0.1)
    assert r.stats["schur_kernels"] == "plan"
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    with pytest.raises(ArgumentError, match="no C compiler"):
        linkdyn.simulate(model, 0.1)


def test_a_failing_compiler_leaves_the_loops_and_no_library(code_cache, monkeypatch):
    monkeypatch.setenv("CC", "false")        # exits 1 without output
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    r = linkdyn.simulate(linkdyn.load_model("jansen_driven"), 0.1)
    assert r.stats["schur_kernels"] == "plan"
    assert not list(code_cache.rglob("ldg_*"))
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    with pytest.raises(ArgumentError, match="compiler false failed"):
        linkdyn.simulate(linkdyn.load_model("jansen_driven"), 0.1)


def test_a_damaged_library_in_the_cache_is_built_again(code_cache, monkeypatch):
    """A truncated or foreign file where the model's library belongs (an interrupted copy by
    another tool, a disk full): loading it fails, and the library is compiled anew."""
    integs = []
    attach = generated.attach
    monkeypatch.setattr(generated, "attach", lambda integ: integs.append(integ) or
                        attach(integ))
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "off")
    model = linkdyn.load_model("jansen")
    plan = linkdyn.simulate(model, 0.2)
    path = generated.library_path(generated.compiler(), integs[0].schur_source())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF truncated")
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    code = linkdyn.simulate(model, 0.2)
    assert code.stats["schur_kernels"] == "generated"
    assert path.stat().st_size > 1000
    assert np.abs(code.q - plan.q).max() < 1e-12


def test_an_unknown_setting_is_named(monkeypatch):
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "always")
    with pytest.raises(ArgumentError, match="LINKDYN_GENERATED_CODE must be one of auto, "
                                            "off, require, got 'always'"):
        linkdyn.simulate(linkdyn.load_model("jansen_driven"), 0.1)


def test_a_plan_too_large_is_left_to_the_loops_without_being_written_out(code_cache, monkeypatch):
    """A chain of 2,000 bars: its plan is some five million characters of C (a chain of 60
    bars' is 144,000); a lower bound of its length, found at once, turns it down."""
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    r = linkdyn.simulate(linkdyn.chain(2000), 1e-4, t_out="final")
    assert r.stats["schur_kernels"] == "plan"
    # measured 0.04 ms; a chain of 20,000 bars took 1.4 s when its plan was written out whole
    assert r.stats["schur_code_seconds"] < 0.5
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    with pytest.raises(ArgumentError, match="more than 100,000 characters of C"):
        linkdyn.simulate(linkdyn.chain(2000), 1e-4, t_out="final")


def test_the_size_limit_can_be_moved(code_cache, monkeypatch):
    """Below the Jansen linkage's 41,600 characters its plan keeps the loops; a chain of 60
    bars (143,500) gets its code above the default limit when asked."""
    model = linkdyn.load_model("jansen")
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    monkeypatch.setenv("LINKDYN_GENERATED_MAX_SOURCE", "30_000")
    assert linkdyn.simulate(model, 0.05).stats["schur_kernels"] == "plan"
    monkeypatch.setenv("LINKDYN_GENERATED_MAX_SOURCE", "50000")
    assert linkdyn.simulate(model, 0.05).stats["schur_kernels"] == "generated"
    monkeypatch.setenv("LINKDYN_GENERATED_MAX_SOURCE", "200000")
    assert linkdyn.simulate(linkdyn.chain(60), 0.01).stats["schur_kernels"] == "generated"
    monkeypatch.setenv("LINKDYN_GENERATED_MAX_SOURCE", "-5")
    with pytest.raises(ArgumentError, match="LINKDYN_GENERATED_MAX_SOURCE must be a "
                                            "positive whole number of characters, got '-5'"):
        linkdyn.simulate(model, 0.05)


def test_a_model_without_rows_or_with_the_bdf_has_no_plan(code_cache, monkeypatch):
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    r = linkdyn.simulate(linkdyn.load_model("jansen"), 0.05, method="bdf")
    assert r.stats["schur_kernels"] == "plan"
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    with pytest.raises(ArgumentError, match="no Schur plan"):
        linkdyn.simulate(linkdyn.load_model("jansen"), 0.05, method="bdf")
