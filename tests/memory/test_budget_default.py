"""The process's one work-memory budget (issue 30): it exists, says where it came from and is
set by the environment or set_memory_budget(); its default is half of the least of the cgroup's
limit, what RLIMIT_AS leaves and physical memory; huge pages for kept memory follow the host.
"""

from __future__ import annotations

import argonishche
import pytest
from argonishche import _memory_limits
from budget_gate import MIB
from support import needed, run_python

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
