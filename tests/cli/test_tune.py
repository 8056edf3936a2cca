"""``argonishche tune`` run for real: the kernels measured with many rounds and the choice
remembered, and a recommendation found at small sizes, every printed form of it usable as printed
(the search, the budget and OWASP's minimums are tested on a model: test_tune_*.py).

Timings are never asserted (the machines are shared): what is checked is what was measured, what
was chosen from it, and that the choice meets its own measurement.
"""

from __future__ import annotations

import io
import itertools
import json
import sys

import argonishche
import pytest
from argonishche import _cli
from argonishche._bench import progress as progress_module
from support import make_registry
from tune_model import call


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


# ---- real runs -----------------------------------------------------------------------------------


def test_real_recommendation_meets_its_own_measurement_and_every_form_works(own_registry,
                                                                            capsys):
    status, out, _ = call(capsys, "--rounds", "8", "--latency", "20", "--memory-budget", "8",
                          "--concurrency", "2", "--json")
    assert status == 0, out
    parameters = json.loads(out)["parameters"]
    chosen = parameters["chosen"]
    assert parameters["concurrency"] == 2 and chosen["p95_ms"] <= 20
    assert chosen["memory_cost"] * 2 <= 8 * 1024
    t, m, p = chosen["time_cost"], chosen["memory_cost"], chosen["parallelism"]
    # Each printed form, used as printed.
    settings = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
                for line in chosen["settings"] if not line.startswith(" ")}
    argon2 = pytest.importorskip("argon2")
    hasher = eval(settings["argon2-cffi"], {"argon2": argon2})
    encoded = hasher.hash("correct horse")
    assert encoded.startswith(settings["PHC"] + "$")
    ours = eval(settings["argonishche"], {"argonishche": argonishche})
    assert ours.verify(encoded, "correct horse") and not ours.check_needs_rehash(encoded)
    assert f"time_cost = {t}; memory_cost = {m}; parallelism = {p}" in settings["Django"]
    # The trials the search made are the ones reported, each measured, the chosen among them.
    trials = parameters["trials"]
    assert all(trial["latencies_ms"] and trial["batch_seconds"] for trial in trials)
    assert any((trial["memory_cost"], trial["time_cost"], trial["p95_ms"]) ==
               (m, t, chosen["p95_ms"]) for trial in trials)


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
    assert _cli.main(["tune", "--rounds", "8", "--latency", "10", "--memory-budget", "4",
                      "--concurrency", "1"]) == 0
    drawn = terminal.getvalue()
    assert "kernels [" in drawn and "parameters [" in drawn
    assert drawn.endswith("\r\033[K")  # cleared at the end
