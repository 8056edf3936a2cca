"""``argonishche tune`` and the work-memory budget: the budget it plans within, what that budget
holds, the variable a deployment needs, and plans the process cannot have refused before measuring.
"""

from __future__ import annotations

import json

import argonishche
import pytest
from argonishche import _memory_limits, _parameter_checks, _tune_search
from argonishche._bench import machine
from tune_model import MIB, Model, call


def test_the_budget_is_the_processs_by_default_and_what_it_holds_is_said(budget, timing,
                                                                         no_kernels, capsys):
    budget(96)
    timing(per_kib_pass_ms=1e-4)   # fast: the budget decides the memory
    status, out, _ = call(capsys, "--latency", "100", "--concurrency", "2")
    assert status == 0
    assert ("Work memory: 96 MiB for all concurrent hashes (the process's work-memory budget: "
            "set_memory_budget(96))") in out
    assert "Recommended: t=" in out and "m=49,152 KiB (48 MiB)" in out
    wait = argonishche.memory_budget().wait_seconds
    assert (f"the budget of 96 MiB holds 2 such hashes at once (48 MiB each); more wait for room "
            f"in arrival order, up to {wait:g} s (ARGONISHCHE_MEMORY_WAIT_SECONDS), then "
            f"MemoryBudgetTimeout") in out
    status, out, _ = call(capsys, "--latency", "100", "--concurrency", "2", "--json")
    parameters = json.loads(out)["parameters"]
    assert parameters["budget"]["mib"] == 96 and not parameters["budget"]["raised"]
    assert parameters["memory"]["at_once"] == 2


def test_a_budget_above_the_processs_is_measured_with_it_raised_and_put_back(
        monkeypatch, budget, no_kernels, capsys):
    """Raised where the plan fits the process's budget all the same: each hash is at most the
    default limit (here 16 MiB, standing in for 4 GiB)."""
    budget(32)
    monkeypatch.setattr(_tune_search, "DEFAULT_LIMITS",
                        _parameter_checks.Limits(max_memory_cost=16384))
    model = Model(per_kib_pass_ms=1e-4)
    seen = []

    def batch(*args):
        seen.append(argonishche.memory_budget().budget)
        return model(*args)
    monkeypatch.setattr(_tune_search, "timed_batch", batch)
    status, out, _ = call(capsys, "--latency", "100", "--concurrency", "2",
                          "--memory-budget", "256")
    assert status == 0
    assert ("Work memory: 256 MiB for all concurrent hashes (--memory-budget 256)\n  more than "
            "this process's work-memory budget, 32 MiB (set_memory_budget(32)): raised to 256 "
            "MiB for this run") in out
    assert seen and set(seen) == {256 * MIB}
    after = argonishche.memory_budget()
    assert (after.budget, after.source) == (32 * MIB, "set_memory_budget(32)")


def test_a_plan_over_the_processs_budget_is_refused_before_measuring(budget, timing, no_kernels,
                                                                     capsys):
    """Its hashes would all start at once: the variable that lets the process have it is said."""
    budget(32)
    model = timing()
    status, out, err = call(capsys, "--latency", "100", "--concurrency", "2",
                            "--memory-budget", "256")
    assert status == 2 and out == "" and model.calls == []
    assert err == ("Error: --memory-budget 256 with --concurrency 2 plans 2 hashes at once of "
                   "128 MiB each, 256 MiB in all: more than this process's work-memory budget, "
                   "32 MiB (set_memory_budget(32)); give at most --memory-budget 32 (or a smaller "
                   "--concurrency), or set ARGONISHCHE_MEMORY_BUDGET_MIB=256 if the process may "
                   "have that much\n")
    assert argonishche.memory_budget().budget == 32 * MIB


def test_a_budget_the_process_cannot_have_is_refused_before_measuring(monkeypatch, timing,
                                                                      no_kernels, capsys):
    model = timing()
    monkeypatch.setattr(_memory_limits, "memory_limit", lambda: (100 * MIB, "a test's limit"))
    status, out, err = call(capsys, "--memory-budget", "101")
    assert status == 2 and out == "" and model.calls == []
    assert err.startswith("Error: --memory-budget 101 MiB is more than this process can have at "
                          "all (a test's limit: 100 MiB)")
    assert call(capsys, "--memory-budget", "100", "--latency", "100")[0] == 0


@pytest.mark.parametrize("budget_mib, variable, note", [
    # 2 x 128 MiB: the default (64 MiB) holds none of them: a deployment needs the variable.
    (256, "ARGONISHCHE_MEMORY_BUDGET_MIB=256", None),
    # 2 x 16 MiB: the default holds 4 of them; a deployment is told what it has without it.
    (32, None, "(without ARGONISHCHE_MEMORY_BUDGET_MIB=32, a process here has argonishche's "
               "default budget, 64 MiB (a test's default), which holds 4)"),
])
def test_the_variable_a_deployment_needs_is_printed_when_the_default_is_too_small(
        monkeypatch, timing, no_kernels, capsys, budget_mib, variable, note):
    timing(per_kib_pass_ms=1e-4)
    monkeypatch.setattr(_memory_limits, "default_budget", lambda: (64 * MIB, "a test's default"))
    args = ["--latency", "100", "--concurrency", "2", "--memory-budget", str(budget_mib)]
    status, out, _ = call(capsys, *args)
    assert status == 0
    assert (f"environment:  {variable}" in out) == (variable is not None)
    assert "ARGONISHCHE_MEMORY_BUDGET_MIB=" in out   # said either way
    if note:
        assert note in out
    settings = json.loads(call(capsys, *args, "--json")[1])["parameters"]["chosen"]["settings"]
    assert [line for line in settings if line.startswith("environment:")] == \
        ([f"environment:  {variable}  (argonishche's work-memory budget; the default here holds "
          f"fewer of these hashes at once)"] if variable else [])


@pytest.mark.parametrize("load, said", [(0.1, False), (0.49, False), (0.51, True), (7.8, True)])
def test_a_busy_machine_is_said(monkeypatch, timing, no_kernels, capsys, load, said):
    timing()
    monkeypatch.setattr(machine, "machine_state", lambda: {"cpus": 2, "loadavg": [load, 1, 1]})
    out = call(capsys, "--latency", "100", "--concurrency", "1", "--memory-budget", "64")[1]
    assert (f"Note: the machine was busy (load average {load:.2f} on 2 CPUs before the search): "
            f"other processes' work is in these timings" in out) == said
