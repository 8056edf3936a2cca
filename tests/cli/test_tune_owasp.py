"""``argonishche tune`` and OWASP's minimums for Argon2id: compared on memory and passes, and a
recommendation below them warned about with what would reach one.
"""

from __future__ import annotations

import json

import pytest
from argonishche import _tune, _tune_search
from tune_model import Model, call


def test_owasps_minimums_are_compared_on_memory_and_passes():
    meets = _tune.meets_owasp
    assert meets(47104, 1) and not meets(47103, 1)
    assert meets(19456, 2) and not meets(19455, 2) and meets(19455, 3)
    assert meets(12288, 3) and meets(9216, 4) and not meets(9215, 4)
    assert meets(7168, 5) and meets(7168, 64) and not meets(7167, 64)


@pytest.mark.parametrize("latency, budget_mib, advice, fixes", [
    # The latency decides (one pass over 20 MiB): one pass over 46 MiB needs 48.1 ms.
    (20.0, 1024, "--latency 49 would reach one: one pass over 47,104 KiB (OWASP's m=47104 t=1) "
                 "took p95 48.1 ms", ["--latency", "49"]),
    # The budget decides (16 MiB, 2 passes): 3 passes over it reach OWASP's m=12288 t=3.
    (40.0, 16, "--latency 51 would reach one: 3 passes over 16,384 KiB, the most the budget "
               "allows per hash (OWASP's m=12288 t=3) took p95 50.2 ms", ["--latency", "51"]),
    # The budget is below all of them: 7 MiB, and 5 passes over it, which take 36.8 ms.
    (20.0, 4, "--memory-budget 7 (1 x 7 MiB) is the least that reaches one, with --latency 37: "
              "5 passes over 7,168 KiB (OWASP's m=7168 t=5) took p95 36.8 ms",
     ["--memory-budget", "7", "--latency", "37"]),
    (200.0, 4, "--memory-budget 7 (1 x 7 MiB) is the least that reaches one, within the target: "
               "5 passes over 7,168 KiB (OWASP's m=7168 t=5) took p95 36.8 ms",
     ["--memory-budget", "7"]),
])
def test_below_owasps_minimums_a_warning_says_what_would_reach_one(timing, no_kernels, capsys,
                                                                  latency, budget_mib, advice,
                                                                  fixes):
    timing()   # exact: 1 ms + 1 us per KiB-pass
    args = ["--latency", str(latency), "--concurrency", "1", "--memory-budget", str(budget_mib)]
    status, out, _ = call(capsys, *args)
    assert status == 0
    assert "WARNING: t=" in out and "is below every one of OWASP's minimums for Argon2id" in out
    assert advice in out
    # The advice, taken, is a recommendation that reaches one, and no warning.
    status, out, _ = call(capsys, *args, *fixes, "--json")
    parameters = json.loads(out)["parameters"]
    chosen = parameters["chosen"]
    assert _tune.meets_owasp(chosen["memory_cost"], chosen["time_cost"])
    assert parameters["owasp"] == {"meets": True, "needs": None, "advice": None}


def test_a_minimum_that_meets_the_target_when_measured_again_is_not_advised_as_a_latency(
        timing):
    """The search judged one pass over 46 MiB too slow (a disturbed measurement), measured again
    it meets the target: the advice says so, not "--latency" below the target."""
    timing()   # 46 MiB: 48.1 ms
    budget = _tune.plan_budget(1024)
    below = Model().latency(40960, 1)
    chosen = _tune_search.Trial(40960, 1, 2, [below] * 20, [below / 1e3] * 20, 1)
    found = {"chosen": chosen, "concurrency": 1, "latency_target_ms": 60.0, "parallelism": 2,
             "trials": [chosen]}
    checked = _tune.owasp_check(found, budget)
    assert not checked["meets"] and checked["needs"]["latency_ms"] == 49
    assert checked["advice"].startswith("measured again, one pass over 47,104 KiB (OWASP's "
                                        "m=47104 t=1) met the target (p95 49 ms, rounded up)")
