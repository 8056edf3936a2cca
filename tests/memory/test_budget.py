"""The process's one work-memory budget (issue 30): it exists and says where it came from, a
burst over it waits instead of failing or over-allocating, a hash larger than all of it is
refused at once, any thread reuses memory another thread's hash finished with, and waiting is
in arrival order, bounded in time, interruptible and invisible to an event loop.

The tests that must also fail on the per-thread arenas before the budget observe what any
version shows (/proc/self/maps, whether hashes raise under RLIMIT_AS), in a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

import argonishche
import pytest
from argonishche import (
    ArgonishcheMemoryError,
    MemoryBudgetError,
    MemoryBudgetTimeout,
    _memory_limits,
    _work_memory,
    argon2_hash,
)
from argonishche._core import ffi, lib
from support import (
    PASSWORD,
    SALT,
    FakeEntryPoint,
    Pool,
    allocator_plugin,
    make_registry,
    needed,
    run_python,
)

MIB = 1024 * 1024
#: One hash that holds 8 MiB of the budget for a few milliseconds.
EIGHT = dict(time_cost=1, memory_cost=8192, parallelism=1)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc and sets RLIMIT_AS (Linux)")


def wait_until(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


class Gate(Pool):
    """A plugin allocator whose acquire() waits for a gate: the budget share its hash reserved
    (before acquire) stays held until the test opens the gate."""

    def __init__(self):
        super().__init__(name="gate")
        self.entered, self.gate = threading.Event(), threading.Event()

    def acquire(self, size):
        self.entered.set()
        assert self.gate.wait(60)
        return super().acquire(size)


@pytest.fixture
def gate(install):
    allocator = Gate()
    install(make_registry(FakeEntryPoint("zz-gate", allocator_plugin(allocator))))
    return allocator


def hold_budget(gate, **costs):
    """A thread whose hash holds its share of the budget until gate.gate is set."""
    thread = threading.Thread(target=argon2_hash, args=(PASSWORD, SALT),
                              kwargs={"allocator": "gate", **costs})
    thread.start()
    assert gate.entered.wait(60)
    return thread


# ---- 1. there is a budget ---------------------------------------------------------------------


def test_the_process_has_one_budget_that_says_where_it_came_from():
    """Failed before: argonishche had no memory_budget (AttributeError)."""
    state = argonishche.memory_budget()
    physical = _memory_limits.physical_memory()
    assert 0 < state.budget <= physical // 2 + MIB, state
    assert state.source and state.held == state.in_use + state.idle <= state.budget
    assert state.high_water <= state.budget


def test_the_environment_sets_the_budget_and_info_shows_it():
    result = run_python("""
        import json, argonishche
        argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=4096,
                                parallelism=1)
        print(json.dumps(argonishche.memory_budget()._asdict()))
        from argonishche import _info
        print(_info.render(_info.collect(cpuinfo=False)))
        """, ARGONISHCHE_MEMORY_BUDGET_MIB="48", ARGONISHCHE_MEMORY_IDLE_SECONDS="3",
        ARGONISHCHE_MEMORY_WAIT_SECONDS="7")
    assert result.returncode == 0, result.stderr
    import json
    state = json.loads(result.stdout.splitlines()[0])
    assert state["budget"] == 48 * MIB and state["source"] == "ARGONISHCHE_MEMORY_BUDGET_MIB=48"
    assert (state["idle_seconds"], state["wait_seconds"]) == (3, 7)
    assert state["idle"] == needed(4096) and state["high_water"] == needed(4096)
    assert "Work memory: a budget of 48.0 MiB for the whole process" in result.stdout
    assert "held now 4.0 MiB (0.0 MiB in use by 0 hashes, 4.0 MiB idle)" in result.stdout


@pytest.mark.parametrize("variable", ["ARGONISHCHE_ARENA_RETAIN_MIB", "ARGONISHCHE_ARENA_MAX_MIB"])
def test_the_per_thread_bounds_are_retired_with_a_message_that_says_what_to_set(variable):
    result = run_python("""
        import argonishche
        argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32,
                                parallelism=1)
        """, **{variable: "256"})
    assert result.returncode != 0
    assert "SettingError" in result.stderr and f"{variable}='256': must be unset" in result.stderr
    assert "ARGONISHCHE_MEMORY_BUDGET_MIB" in result.stderr


@pytest.mark.parametrize("call", [dict(mib=0), dict(mib=True), dict(mib=1.5),
                                  dict(idle_seconds=-1), dict(wait_seconds="5"),
                                  dict(wait_seconds=10**9)])
def test_set_memory_budget_refuses_what_it_cannot_mean(budget, call):
    with pytest.raises(argonishche.ParameterError):
        budget(**call)


def test_set_memory_budget_with_nothing_goes_back_to_the_environment_or_default(budget):
    assert budget(32).source == "set_memory_budget(32)"
    state = budget()
    configured = argonishche._settings.current().memory_budget_mib
    if configured is None:
        assert (state.budget, state.source) == _memory_limits.default_budget()
    else:
        assert state.source == f"ARGONISHCHE_MEMORY_BUDGET_MIB={configured}"


# ---- 2. a burst waits instead of failing or over-allocating -------------------------------------


BURST = """
import resource, sys, threading, argonishche
from argonishche import argon2_hash
costs = dict(time_cost=1, memory_cost=32768, parallelism=1)  # 32 MiB each
expected = argon2_hash(b"password", b"somesalt", **costs, allocator="system")
argonishche.trim_memory()
threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, run()))
           for i in range(12)]
barrier = threading.Barrier(13)
results = [None] * 12

def run():
    barrier.wait()
    try:
        return argon2_hash(b"password", b"somesalt", **costs) == expected
    except MemoryError as exc:
        return f"{type(exc).__name__}: {exc}"

for t in threads: t.start()  # their stacks are mapped now, before the limit
# Room for the interpreter and about 3 hashes' memory at once, not 12.
with open("/proc/self/status") as status:
    vm_size = next(int(l.split()[1]) for l in status if l.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm_size + 3 * 33 * 2**20 + 64 * 2**20,) * 2)
barrier.wait()
for t in threads: t.join()
print(results)
print(argonishche.memory_budget().high_water)
"""


@linux_only
def test_a_burst_over_the_budget_waits_its_turn_and_every_answer_is_right():
    """12 hashes of 32 MiB at once, with address space for about 3: every one returns the right
    tag, and no more than the budget is ever held.  Failed before: 9 of the 12 raised
    ArgonishcheMemoryError (nothing bounded the burst)."""
    result = run_python(BURST, ARGONISHCHE_MEMORY_BUDGET_MIB="96", timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == str([True] * 12), lines[0]
    assert int(lines[1]) <= 96 * MIB


class Recorder(Pool):
    """A plugin allocator that notes which hash it serves: acquire() runs once the hash is
    admitted, while it holds its share, so with room for one hash the notes are in admission
    order (a note taken after the hash returned could be overtaken while it waits for the GIL)."""

    def __init__(self):
        super().__init__(name="recorder")
        self.order = []

    def acquire(self, size):
        self.order.append(threading.current_thread().name)
        return super().acquire(size)


@linux_only
@pytest.mark.parametrize("allocator", ["arena", "system"])
def test_a_burst_the_os_refuses_within_the_budget_waits_instead_of_failing(allocator):
    """The same burst with a budget of 1 GiB, above what RLIMIT_AS leaves: the OS refuses a
    mapping (or malloc) while other hashes hold theirs, and the hash waits for them instead of
    failing (through a login adapter that failure was a right password answered False).  Failed
    before the wait on refusals: some of the 12 raised ArgonishcheMemoryError ("could not map"
    for arena, "could not allocate" for system), and the rest were right."""
    code = BURST.replace("argon2_hash(b\"password\", b\"somesalt\", **costs) == expected",
                         f"argon2_hash(b\"password\", b\"somesalt\", **costs, "
                         f"allocator={allocator!r}) == expected")
    assert code != BURST
    # glibc would serve 32 MiB from the threads' own heaps, reserved before the limit: these
    # make every such malloc a mapping of its own, which the limit can refuse.
    result = run_python(code, ARGONISHCHE_MEMORY_BUDGET_MIB="1024", MALLOC_ARENA_MAX="1",
                        MALLOC_MMAP_THRESHOLD_="131072", timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == str([True] * 12)


def test_a_burst_is_admitted_in_arrival_order(budget, install):
    """With room for one hash, hashes that arrive while it runs are admitted in the order they
    came."""
    gate, recorder = Gate(), Recorder()
    install(make_registry(FakeEntryPoint("zz-gate", allocator_plugin(gate, recorder))))
    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    threads = []
    for n in range(4):
        thread = threading.Thread(target=argon2_hash, args=(PASSWORD, SALT), name=str(n),
                                  kwargs={"allocator": "recorder", **EIGHT})
        thread.start()
        threads.append(thread)
        wait_until(lambda n=n: argonishche.memory_budget().waiting == n + 1)
    gate.gate.set()
    for thread in [holder, *threads]:
        thread.join(60)
    assert recorder.order == ["0", "1", "2", "3"]
    state = argonishche.memory_budget()
    assert state.waiting == 0 and state.running == 0 and state.in_use == 0


def test_the_budget_is_never_exceeded_by_threads_of_mixed_sizes(budget):
    budget(40, wait_seconds=120)
    _work_memory.reset_high_water()
    argonishche.trim_memory()
    expected = {m: argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=m, parallelism=2,
                               allocator="system") for m in (4096, 16384, 32768)}
    errors, results = [], []

    def run(m):
        try:
            results.append(argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=m,
                                       parallelism=2) == expected[m])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(m,)) for m in (4096, 16384, 32768) * 6]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors and results == [True] * 18
    assert argonishche.memory_budget().high_water <= 40 * MIB


# ---- 3. a hash larger than the whole budget ----------------------------------------------------


def test_a_hash_larger_than_the_whole_budget_is_refused_at_once(budget):
    """Failed before: there was no budget to refuse it (it mapped its 64 MiB and ran)."""
    budget(32)
    before = argonishche.memory_budget()
    start = time.monotonic()
    with pytest.raises(MemoryBudgetError) as caught:
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=65536, parallelism=1)
    assert time.monotonic() - start < 1.0  # refused, not waited for
    message = str(caught.value)
    assert "needs 64 MiB of work memory" in message and "budget of 32 MiB" in message
    assert "set_memory_budget(32)" in message and "ARGONISHCHE_MEMORY_BUDGET_MIB" in message
    assert (caught.value.needed, caught.value.budget) == (64 * MIB, 32 * MIB)
    assert isinstance(caught.value, ArgonishcheMemoryError)  # the adapters' memory answer
    assert argonishche.memory_budget().maps == before.maps  # nothing was mapped for it


@pytest.mark.parametrize("allocator", ["arena", "system", "hugepages", "locked", "pool"])
def test_every_allocator_is_refused_over_the_budget(budget, install, allocator):
    install(make_registry(FakeEntryPoint("zz-pool", allocator_plugin(Pool()))))
    budget(4)
    with pytest.raises(MemoryBudgetError):
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=8192, parallelism=1,
                    allocator=allocator)


def test_a_caller_buffer_is_not_counted(budget):
    expected = argon2_hash(PASSWORD, SALT, allocator="system", **EIGHT)
    memory = bytearray(argonishche.memory_size(8192))
    budget(1)
    assert argon2_hash(PASSWORD, SALT, memory=memory, **EIGHT) == expected


# ---- 4. any thread reuses what another thread's hash finished with -----------------------------


SEQUENTIAL_THREADS = """
import sys, threading, argonishche
size = 32 * 1024 * 1024
def big_mappings():
    # Writable private mappings of at least a hash's size (not the address space each
    # thread's malloc arena reserves: that is inaccessible).
    count = 0
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            count += end - start >= size and perms == "rw-p"
    return count
before = big_mappings()
go = [threading.Event() for _ in range(4)]
done = [threading.Event() for _ in range(4)]
stop = threading.Event()
def worker(i):
    go[i].wait()
    argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32768,
                            parallelism=1)
    done[i].set()
    stop.wait()  # alive, as a server's worker thread is
threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads: t.start()
for i in range(4):
    go[i].set(); done[i].wait()
print(big_mappings() - before)
stop.set()
for t in threads: t.join()
"""


@linux_only
def test_a_thread_reuses_the_memory_another_threads_hash_finished_with():
    """Four live threads hash one after another: one 32 MiB mapping serves all four.  Failed
    before: each thread kept a mapping of its own (4)."""
    result = run_python(SEQUENTIAL_THREADS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1"]


def test_the_counters_show_reuse_across_threads(budget):
    budget(256)
    argonishche.trim_memory()
    before = argonishche.memory_budget()
    argon2_hash(PASSWORD, SALT, **EIGHT)
    thread = threading.Thread(target=argon2_hash, args=(PASSWORD, SALT), kwargs=EIGHT)
    thread.start()
    thread.join(60)
    after = argonishche.memory_budget()
    assert (after.maps - before.maps, after.reuses - before.reuses) == (1, 1)


# ---- waiting: bounded, interruptible, invisible to an event loop -------------------------------


def test_a_hash_that_waits_too_long_raises_memory_budget_timeout(budget, gate):
    budget(12, wait_seconds=0.3)
    holder = hold_budget(gate, **EIGHT)
    try:
        start = time.monotonic()
        with pytest.raises(MemoryBudgetTimeout) as caught:
            argon2_hash(PASSWORD, SALT, **EIGHT)
        waited = time.monotonic() - start
        assert 0.25 <= waited < 5, waited
        assert "waited 0.3 s for 8 MiB" in str(caught.value) and "budget of 12 MiB" in str(
            caught.value)
        assert isinstance(caught.value, TimeoutError)
        assert not isinstance(caught.value, (MemoryError, argonishche.VerificationError))
        assert argonishche.memory_budget().waiting == 0  # its place was given up
    finally:
        gate.gate.set()
        holder.join(60)


def test_a_wait_of_zero_fails_at_once_when_the_budget_is_full(budget, gate):
    budget(12, wait_seconds=0)
    holder = hold_budget(gate, **EIGHT)
    try:
        with pytest.raises(MemoryBudgetTimeout):
            argon2_hash(PASSWORD, SALT, **EIGHT)
        assert argonishche.memory_budget().waiting == 0  # a try that is never queued
    finally:
        gate.gate.set()
        holder.join(60)
    assert argon2_hash(PASSWORD, SALT, **EIGHT)  # room again


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs setitimer")
def test_a_signal_handler_interrupts_a_waiting_hash(budget, gate):
    import signal

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted

    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        start = time.monotonic()
        with pytest.raises(Interrupted):
            argon2_hash(PASSWORD, SALT, **EIGHT)
        assert time.monotonic() - start < 2.0  # within a slice, not after the 60 s wait
        assert argonishche.memory_budget().waiting == 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        gate.gate.set()
        holder.join(60)


def test_an_abandoned_place_in_the_queue_does_not_hold_up_the_others(budget):
    """A ticket whose owner never comes back (its frame kept alive, never closed) is dropped
    once it has not been seen for a while, and the hashes behind it run."""
    budget(12, wait_seconds=30)
    holder = _work_memory.reserve(12 * MIB)  # the whole budget
    ticket = ffi.new("argonishche_memory_ticket *")  # a wait of 1 ms: it takes a place
    assert lib.argonishche_memory_reserve(ticket, 8 * MIB, 1) == lib.ARGONISHCHE_WAIT_MEMORY
    assert ticket.queued and argonishche.memory_budget().waiting == 1
    holder.close()  # room now, but the abandoned ticket is first in line
    start = time.monotonic()
    try:
        argon2_hash(PASSWORD, SALT, **EIGHT)
        assert 3 < time.monotonic() - start < 20
    finally:
        lib.argonishche_memory_ticket_close(ticket)


def test_hash_async_waits_for_room_without_blocking_the_event_loop(budget, gate):
    from argonishche._async import run_blocking

    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    ticks = []

    async def main():
        waiting = asyncio.ensure_future(run_blocking(argon2_hash, PASSWORD, SALT, **EIGHT))
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks.append(time.monotonic())
        assert not waiting.done()
        gate.gate.set()
        return await waiting

    try:
        assert asyncio.run(main()) == argon2_hash(PASSWORD, SALT, allocator="system", **EIGHT)
    finally:
        gate.gate.set()
        holder.join(60)
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert max(gaps) < 0.5, gaps


# ---- idle memory goes back --------------------------------------------------------------------


def test_idle_memory_is_given_back_after_the_idle_time(budget):
    budget(256, idle_seconds=1)
    argon2_hash(PASSWORD, SALT, **EIGHT)
    assert argonishche.memory_budget().idle >= needed(8192)
    wait_until(lambda: argonishche.memory_budget().idle == 0, timeout=10)


def test_memory_in_steady_use_is_kept(budget):
    budget(256, idle_seconds=1)
    argonishche.trim_memory()
    before = argonishche.memory_budget().maps
    end = time.monotonic() + 2.5
    while time.monotonic() < end:
        argon2_hash(PASSWORD, SALT, **EIGHT)
        time.sleep(0.2)
    assert argonishche.memory_budget().maps - before == 1


def test_trim_memory_gives_idle_memory_back_at_once(budget):
    budget(256)
    argon2_hash(PASSWORD, SALT, **EIGHT)
    assert argonishche.trim_memory() >= needed(8192)
    assert argonishche.memory_budget().idle == 0


def test_lowering_the_budget_gives_the_oldest_idle_memory_back_first(budget):
    budget(256)
    argonishche.trim_memory()
    for m in (8192, 16384, 32768):  # none fits the next: three mappings, idle in that order
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=m, parallelism=1)
    assert argonishche.memory_budget().idle == needed(8192) + needed(16384) + needed(32768)
    budget(40)
    assert argonishche.memory_budget().idle == needed(32768)
    budget(20)
    assert argonishche.memory_budget().held == 0


# ---- fork ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_starts_with_no_hash_running_and_can_hash(budget, gate):
    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: the holder's thread is not here, nor its share
            try:
                state = argonishche.memory_budget()
                tag = argon2_hash(PASSWORD, SALT, allocator="arena", **EIGHT)
                os.write(write, f"{state.in_use} {state.running} {len(tag)}".encode())
            finally:
                os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        assert os.read(read, 100).decode() == "0 0 32"
        os.close(read)
    finally:
        gate.gate.set()
        holder.join(60)


# ---- the default budget -------------------------------------------------------------------------


def fake_proc(tmp_path, cgroup, mountinfo):
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text(mountinfo)
    return str(proc)


def test_the_cgroup_v2_limit_is_the_least_of_the_group_and_its_ancestors(tmp_path):
    root = tmp_path / "cg"
    (root / "app" / "worker").mkdir(parents=True)
    (root / "app" / "memory.max").write_text("1610612736\n")
    (root / "app" / "worker" / "memory.max").write_text("max\n")
    (root / "app" / "worker" / "memory.high").write_text("2147483648\n")
    proc = fake_proc(tmp_path, "0::/app/worker\n",
                     f"30 23 0:26 / {root} rw,nosuid - cgroup2 cgroup2 rw\n")
    limit, where = _memory_limits.cgroup_limit(proc)
    assert limit == 1610612736 and where.startswith("cgroup v2 memory.max")


def test_the_cgroup_v1_limit_is_read_and_unlimited_is_none(tmp_path):
    root = tmp_path / "memcg"
    (root / "srv").mkdir(parents=True)
    (root / "srv" / "memory.limit_in_bytes").write_text("805306368\n")
    (root / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    mountinfo = f"35 25 0:30 / {root} rw - cgroup cgroup rw,memory\n"
    limit, where = _memory_limits.cgroup_limit(fake_proc(tmp_path, "4:memory:/srv\n", mountinfo))
    assert limit == 805306368 and "v1" in where
    (root / "srv" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    other = tmp_path / "other"
    other.mkdir()
    assert _memory_limits.cgroup_limit(fake_proc(other, "4:memory:/srv\n", mountinfo)) is None


def test_the_default_budget_is_half_of_the_least_limit(monkeypatch):
    monkeypatch.setattr(_memory_limits, "cgroup_limit", lambda: (3 * 2**30, "cgroup v2 memory.max"))
    monkeypatch.setattr(_memory_limits, "physical_memory", lambda: 24 * 2**30)
    monkeypatch.setattr(_memory_limits, "_resource_limits", lambda: [(8 * 2**30, "RLIMIT_AS")])
    assert _memory_limits.default_budget() == (
        int(1.5 * 2**30), "half of cgroup v2 memory.max (3.0 GiB)")
    monkeypatch.setattr(_memory_limits, "_resource_limits", lambda: [(2**30, "RLIMIT_AS")])
    assert _memory_limits.default_budget() == (2**29, "half of RLIMIT_AS (1.0 GiB)")


def test_a_resource_limit_counts_what_it_leaves_of_the_address_space(monkeypatch):
    """RLIMIT_AS counts reservations, not memory: 64 threads' stacks and glibc's malloc arenas
    took about 1.5 GiB of it before any hash.  The budget is half of what is left."""
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda which: (
        (4 * 2**30, 4 * 2**30) if which == resource.RLIMIT_AS else
        (resource.RLIM_INFINITY, resource.RLIM_INFINITY)))
    monkeypatch.setattr(_memory_limits, "_in_use", lambda field: 3 * 2**30 if field == "VmSize"
                        else 0)
    assert _memory_limits._resource_limits() == [
        (2**30, "what RLIMIT_AS leaves (1.0 GiB of 4.0 GiB)")]
    monkeypatch.setattr(_memory_limits, "cgroup_limit", lambda: None)
    assert _memory_limits.default_budget() == (2**29, "half of what RLIMIT_AS leaves (1.0 GiB of "
                                                    "4.0 GiB)")


# ---- huge pages ---------------------------------------------------------------------------------


def fake_balloon(tmp_path, features: str | None):
    driver = tmp_path / "bus" / "virtio" / "drivers" / "virtio_balloon"
    driver.mkdir(parents=True)
    if features is not None:
        (driver / "virtio0").mkdir()
        (driver / "virtio0" / "features").write_text(features + "\n")
    return str(tmp_path)


def test_free_page_reporting_is_read_from_the_balloon_devices_feature_bits(tmp_path):
    # Bit 5 is VIRTIO_BALLOON_F_REPORTING; this is the string a Firecracker guest showed.
    reporting = "0110010100000000000000000000000010000000"
    assert _memory_limits.free_page_reporting(fake_balloon(tmp_path / "a", reporting)).endswith(
        "virtio_balloon/virtio0")
    assert _memory_limits.free_page_reporting(fake_balloon(tmp_path / "b", "0110000000")) is None
    assert _memory_limits.free_page_reporting(fake_balloon(tmp_path / "c", None)) is None
    assert _memory_limits.free_page_reporting(str(tmp_path / "nothing")) is None


def test_huge_pages_auto_follows_free_page_reporting_and_on_off_win(monkeypatch):
    monkeypatch.setattr(_memory_limits, "free_page_reporting", lambda: "/sys/x/virtio0")
    on, why = _memory_limits.huge_pages("auto")
    assert not on and "reports free memory to its host (/sys/x/virtio0)" in why
    monkeypatch.setattr(_memory_limits, "free_page_reporting", lambda: None)
    assert _memory_limits.huge_pages("auto") == (True, "auto: on")
    assert _memory_limits.huge_pages("off") == (False, "ARGONISHCHE_MEMORY_HUGE_PAGES=off")
    assert _memory_limits.huge_pages("on") == (True, "ARGONISHCHE_MEMORY_HUGE_PAGES=on")


def test_the_huge_pages_setting_reaches_the_budget_and_info():
    result = run_python("""
        import argonishche
        from argonishche import _info
        state = argonishche.memory_budget()
        print(state.huge_pages, state.huge_pages_why)
        print(_info.render(_info.collect(cpuinfo=False)))
        """, ARGONISHCHE_MEMORY_HUGE_PAGES="off")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("False ARGONISHCHE_MEMORY_HUGE_PAGES=off")
    assert "huge pages for kept memory: off (ARGONISHCHE_MEMORY_HUGE_PAGES=off)" in result.stdout
