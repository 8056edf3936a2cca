"""The ``argonishche tune`` tests' helpers: the command run in-process, and a model of time that
stands in for the timed batch (conftest.py's ``timing`` fixture installs it)."""

from __future__ import annotations

import random

from argonishche import _cli


def call(capsys, *args):
    status = _cli.main(["tune", *args])
    out, err = capsys.readouterr()
    return status, out, err


MIB = 2**20


class Model:
    """A stand-in for the timed batch (:func:`argonishche._tune_search.timed_batch`): each hash
    takes ``fixed_ms + per_kib_pass_ms * m**memory_power * t**passes_power`` ms, exactly, or
    with noise: a relative Gaussian error of *noise*, and one hash in *stall_every* (on average)
    held up by half its time again, as by a scheduling stall; from a seeded generator."""

    def __init__(self, per_kib_pass_ms=0.001, fixed_ms=1.0, memory_power=1.0, passes_power=1.0,
                 noise=0.0, stall_every=0, seed=0):
        self.per_kib_pass_ms, self.fixed_ms = per_kib_pass_ms, fixed_ms
        self.memory_power, self.passes_power = memory_power, passes_power
        self.noise, self.stall_every, self.rng = noise, stall_every, random.Random(seed)
        self.calls = []

    def latency(self, memory_cost, time_cost):
        return self.fixed_ms + self.per_kib_pass_ms * memory_cost ** self.memory_power \
            * time_cost ** self.passes_power

    def __call__(self, memory_cost, time_cost, parallelism, concurrency):
        self.calls.append((memory_cost, time_cost))
        each = []
        for _ in range(concurrency):
            ms = self.latency(memory_cost, time_cost)
            if self.noise:
                ms *= max(0.5, 1 + self.rng.gauss(0.0, self.noise))
            if self.stall_every and self.rng.randrange(self.stall_every) == 0:
                ms *= 1.5
            each.append(ms)
        return each, max(each) / 1e3
