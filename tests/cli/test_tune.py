"""``argonishche tune``: the kernels measured with many rounds and the choice remembered; Argon2id
parameters found by RFC 9106 section 4's procedure (the search itself checked against a model
of time, then run for real at small sizes); every printed form of them usable as printed.

Timings are never asserted (the machines are shared): what is checked is what was measured, what
was chosen from it, and that the choice meets its own measurement.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import sys

import pytest

import argonishche
from argonishche import _cli, _params, _tune
from argonishche._bench import progress as progress_module

from support import make_registry


def call(capsys, *args):
    status = _cli.main(["tune", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def own_registry(install):
    """tune re-measures and reselects: on a registry of the test's own."""
    return install(make_registry())


def test_kernels_every_backend_in_cycles_with_the_choice_and_its_margin(own_registry, capsys):
    status, out, _ = call(capsys, "--kernels-only", "--rounds", "16")
    assert status == 0
    names = [b.name for b in own_registry.report() if b.state in ("selected", "available")]
    for algorithm, unit in (("argon2", "block"), ("blake2b", "byte")):
        after = out.split(f"  {algorithm} (cycles per {unit}):\n")[1].splitlines()
        rows = [line.split() for line in itertools.takewhile(
            lambda line: line.startswith("    "), after)]
        assert sorted(row[0] for row in rows) == sorted(names)
        assert all(float(row[1]) > 0 for row in rows)
        chosen = [row for row in rows if "<- selected" in " ".join(row)]
        assert [row[0] for row in chosen] == [own_registry.selected_name(algorithm)]
        assert "measured" in " ".join(chosen[0]) and "16 rounds" in " ".join(chosen[0])
    if len(names) > 1:
        assert f"remembered in {own_registry.choices['argon2'].record}" in out


def test_kernels_json(own_registry, capsys):
    status, out, _ = call(capsys, "--kernels-only", "--rounds", "8", "--json")
    found = json.loads(out)
    assert status == 0 and "parameters" not in found
    kernels = found["kernels"]["kernels"]
    assert set(kernels) == {"argon2", "blake2b"}
    for algorithm, result in kernels.items():
        assert result["selected"] == own_registry.selected_name(algorithm)
        cycles = [b["cycles"] for b in result["backends"].values()]
        assert cycles == sorted(cycles) and cycles[0] > 0
    assert 0.3e9 < found["kernels"]["core_clock_ghz"] * 1e9 < 8e9


def model(per_kib_pass_ms=0.001, fixed_ms=1.0):
    """A stand-in for _tune.trial: latency = fixed + m x t x cost, exactly."""
    calls = []

    def trial(memory_cost, time_cost, parallelism, concurrency, step=None, hopeless_ms=None):
        calls.append((memory_cost, time_cost))
        latency = fixed_ms + memory_cost * time_cost * per_kib_pass_ms
        return _tune.Trial(memory_cost, time_cost, parallelism, [latency] * 3,
                           [latency / 1e3] * 3, concurrency)
    return trial, calls


@pytest.mark.parametrize("latency, budget_mib, expected", [
    # 64 MiB per hash fits one pass in 66.5 ms: the most passes within 500 ms is 7.
    (500.0, 64, (7, 65536)),
    # 512 MiB is too slow even for one pass (525 ms > 100): less memory, then passes.
    (100.0, 512, (1, None)),
])
def test_the_search_takes_the_most_memory_then_the_most_passes(monkeypatch, latency, budget_mib,
                                                               expected):
    trial, calls = model()
    monkeypatch.setattr(_tune, "trial", trial)
    found = _tune.recommend(latency, concurrency=1, budget_mib=budget_mib)
    chosen = found["chosen"]
    assert chosen is not None and chosen.latency_ms <= latency
    time_cost, memory_cost = expected
    assert chosen.time_cost == time_cost
    if memory_cost is not None:
        assert chosen.memory_cost == memory_cost
    else:  # step 8: memory reduced until one pass fits, and not far below what fits
        assert chosen.memory_cost < budget_mib * 1024
        assert 1.0 + chosen.memory_cost * 0.001 * 1.1 > latency * 0.85
    # The best was measured, not extrapolated; one pass more would not fit.
    assert (chosen.memory_cost, chosen.time_cost) in calls
    assert 1.0 + chosen.memory_cost * (chosen.time_cost + 1) * 0.001 > latency
    assert len(calls) <= _tune.MAX_TRIALS


def test_the_search_stays_within_the_limits_argonishche_verifies(monkeypatch):
    trial, _ = model(per_kib_pass_ms=1e-9, fixed_ms=0.0)   # a machine so fast anything fits
    monkeypatch.setattr(_tune, "trial", trial)
    found = _tune.recommend(1000.0, concurrency=1, budget_mib=64 * 1024)
    chosen = found["chosen"]
    limits = _params.DEFAULT_LIMITS
    assert chosen.memory_cost <= limits.max_memory_cost
    assert chosen.time_cost <= limits.max_time_cost
    assert chosen.time_cost * chosen.memory_cost <= limits.max_work
    limits.check_own(time_cost=chosen.time_cost, memory_cost=chosen.memory_cost,
                     parallelism=chosen.parallelism)


def test_nothing_fits_is_said_and_status_1(monkeypatch, own_registry, capsys):
    trial, _ = model(fixed_ms=50.0)
    monkeypatch.setattr(_tune, "trial", trial)
    status, out, _ = call(capsys, "--rounds", "8", "--latency", "10", "--memory-budget", "1",
                          "--concurrency", "1")
    assert status == 1
    assert "nothing meets the target, even at the smallest memory" in out


def test_lanes_are_the_cpus_over_the_concurrent_hashes():
    cpus = os.cpu_count() or 1
    assert _tune.lanes_for(1) == min(cpus, 64)
    assert _tune.lanes_for(cpus) == 1 and _tune.lanes_for(10 * cpus) == 1


def test_real_recommendation_meets_its_own_measurement_and_every_form_works(own_registry,
                                                                            capsys):
    status, out, _ = call(capsys, "--rounds", "8", "--latency", "40", "--memory-budget", "8",
                          "--concurrency", "2", "--json")
    assert status == 0, out
    parameters = json.loads(out)["parameters"]
    chosen = parameters["chosen"]
    assert parameters["concurrency"] == 2 and chosen["latency_ms"] <= 40
    assert chosen["memory_cost"] * 2 <= 8 * 1024
    t, m, p = chosen["time_cost"], chosen["memory_cost"], chosen["parallelism"]
    # Each printed form, used as printed.
    argon2 = pytest.importorskip("argon2")
    cffi_line, ours_line, django_line, _, phc_line = chosen["settings"]
    hasher = eval(cffi_line.split(":", 1)[1].strip(), {"argon2": argon2})
    encoded = hasher.hash("correct horse")
    assert encoded.startswith(phc_line.split(":", 1)[1].strip() + "$")
    ours = eval(ours_line.split(":", 1)[1].strip(), {"argonishche": argonishche})
    assert ours.verify(encoded, "correct horse") and not ours.check_needs_rehash(encoded)
    assert f"time_cost = {t}; memory_cost = {m}; parallelism = {p}" in django_line
    # The trials the search made are the ones reported, each measured.
    assert all(trial["latencies_ms"] and trial["batch_seconds"] for trial in parameters["trials"])


def test_a_progress_bar_on_a_terminal(own_registry, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    real = progress_module.Progress.__init__

    def at_once(self, *args, **kwargs):  # drawn from the start, not after a second
        real(self, *args, **{**kwargs, "delay": 0.0})
    monkeypatch.setattr(progress_module.Progress, "__init__", at_once)
    assert _cli.main(["tune", "--rounds", "8", "--latency", "30", "--memory-budget", "4",
                      "--concurrency", "1"]) == 0
    drawn = terminal.getvalue()
    assert "kernels [" in drawn and "parameters [" in drawn
    assert drawn.endswith("\r\033[K")  # cleared at the end


def test_a_trial_far_over_the_target_is_not_repeated(monkeypatch):
    batches = []

    def batch(memory_cost, time_cost, parallelism, concurrency, latency=100.0):
        batches.append(memory_cost)
        return [latency] * concurrency, latency / 1e3
    monkeypatch.setattr(_tune, "timed_batch", batch)
    hopeless = _tune.trial(1024, 1, 1, 2, hopeless_ms=50.0)
    assert len(batches) == 1 and hopeless.latencies_ms == [100.0, 100.0]
    batches.clear()
    close = _tune.trial(1024, 1, 1, 2, hopeless_ms=200.0)
    # one untimed batch, then the repetitions
    assert len(batches) == _tune.REPETITIONS + 1 and len(close.batch_seconds) == _tune.REPETITIONS
