"""One burst of concurrent Argon2 verifications in a process held to a memory limit: the process
under test of ``tox -e load`` (tests/load/test_verify_burst.py starts it once per library and
way of running).

Why a process of its own: the limit (a memory cgroup, or ``RLIMIT_AS``) must hold the code under
test and nothing else, so that the pytest process is not limited and a library that is
OOM-killed takes only this process with it.  The limit is joined first, before anything heavy
is imported (only the interpreter's start-up runs outside it): argonishche decides its default
work-memory budget from the limits it finds at its first hash, so it must find this one.

    load_verify.py CASES.json --library {argonishche,argon2-cffi,django}
        --mode {threads,asyncio} [--cgroup DIR | --rlimit-as BYTES]
        [--idle-wait SECONDS] [--deadline SECONDS]

CASES.json is a list of ``{"stored": PHC string, "password": str}``; every case is verified at
once: ``--mode threads`` from one thread per case, released together by a barrier (a threaded
server's burst of logins), ``--mode asyncio`` from one coroutine per case on one event loop
(``PasswordHasher.verify_async`` for argonishche, ``asyncio.to_thread`` for argon2-cffi, which
has no async API).  ``--library django`` verifies through Django's ``check_password`` with
``argonishche.contrib.django.Argon2PasswordHasher`` as the only hasher (threads only).

Output, on stdout: ``STARTED`` once the limit is joined and the library imported, ``DONE index
outcome seconds`` as each verification ends (so a process killed mid-burst still says how far it
got), and last ``RESULT {json}``: the outcomes, each verification's latency, the burst's wall
time, VmRSS before and after the burst and after ``--idle-wait`` seconds of idleness, VmHWM, and
for argonishche ``memory_budget()`` at each of those points.  An outcome is ``ok`` (the password
is right), ``mismatch`` (wrong: VerifyMismatchError, or False from Django) or ``error ...`` (any
other exception, with its type and text).  Exit status 0 if every verification ended within
``--deadline``, 3 if some had not (the threads are abandoned: the process exits without them).
"""

from __future__ import annotations

import argparse
import os
import sys

# ---- the limit, before anything else --------------------------------------------------------


def join_limit(cgroup: str | None) -> dict[str, object]:
    """Put this process in its cgroup (if any); what was done, as the process itself sees it."""
    if cgroup is not None:
        with open(os.path.join(cgroup, "cgroup.procs"), "w", encoding="ascii") as procs:
            procs.write(str(os.getpid()))
    with open("/proc/self/cgroup", encoding="ascii") as own:
        groups = own.read().split()
    return {"proc_self_cgroup": groups}


def limit_address_space(beyond: int | None) -> None:
    """RLIMIT_AS at *beyond* bytes more than the address space reserved now, when the burst is
    about to start.  RLIMIT_AS counts reservations, not memory: every thread's stack (8 MiB) and
    every malloc arena glibc makes for contending threads (64 MiB each, up to 8 per CPU) is
    reserved whole, so 64 threads reserve about 1.5 GiB before a hash runs, and a bare 1.5 GiB
    limit would leave no room for any library's work memory (argon2-cffi: 0 of 64)."""
    if beyond is None:
        return
    import resource

    reserved = status_kib("VmSize") * 1024
    resource.setrlimit(resource.RLIMIT_AS, (reserved + beyond, reserved + beyond))
    LIMIT["address_space_reserved"] = reserved
    LIMIT["rlimit_as"] = reserved + beyond
    if "argonishche" in sys.modules:
        # argonishche decided its budget at its first hash (its start-up self-tests), before
        # this limit: an application that changes its limits later asks it to decide again.
        sys.modules["argonishche"].set_memory_budget()


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases")
    parser.add_argument("--library", choices=("argonishche", "argon2-cffi", "django"),
                        required=True)
    parser.add_argument("--mode", choices=("threads", "asyncio"), required=True)
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument("--cgroup", help="the cgroup directory to join (its cgroup.procs)")
    limit.add_argument("--rlimit-as", type=int,
                       help="bytes of address space allowed beyond what the process has reserved "
                            "when the burst starts (RLIMIT_AS is set to the sum)")
    parser.add_argument("--idle-wait", type=float, default=0.0,
                        help="seconds to stay idle after the burst before the last VmRSS")
    parser.add_argument("--deadline", type=float, default=120.0,
                        help="seconds the whole burst may take before it counts as hung")
    arguments = parser.parse_args()
    if arguments.library == "django" and arguments.mode != "threads":
        parser.error("--library django runs from threads only (a WSGI server's)")
    return arguments


ARGUMENTS = parse_arguments()
LIMIT = join_limit(ARGUMENTS.cgroup)

# ---- the burst -------------------------------------------------------------------------------

import json  # noqa: E402 - the limit is joined first (see the module's text)
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402

# Django's Argon2PasswordHasher's costs (django.contrib.auth.hashers, unchanged since Django
# 3.2): what a Django site verifies on every login unless it changed them.
DJANGO_COSTS = dict(time_cost=2, memory_cost=102400, parallelism=8)

_print_lock = threading.Lock()


def say(line: str) -> None:
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def status_kib(field: str) -> int:
    """A VmRSS/VmHWM-style field of /proc/self/status, in KiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def describe(exc: BaseException) -> str:
    return f"error {type(exc).__module__}.{type(exc).__qualname__}: {exc}"


class Library:
    """One library's way to verify: ``verify(stored, password)`` returning True or False or
    raising its mismatch exception, its async twin, and what it is."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.budget: Callable[[], dict[str, object]] | None = None
        if name == "argonishche":
            import argonishche

            hasher = argonishche.PasswordHasher(**DJANGO_COSTS)
            self.verify: Callable[[str, str], object] = hasher.verify
            self.verify_async: Callable[[str, str], Awaitable[object]] = hasher.verify_async
            self.mismatch: type[BaseException] = argonishche.VerifyMismatchError
            self.version = argonishche.__version__
            self.budget = lambda: argonishche.memory_budget()._asdict()
            self.backend = argonishche.selected_backend("argon2")
        elif name == "argon2-cffi":
            import asyncio
            import importlib.metadata

            import argon2

            hasher = argon2.PasswordHasher(**DJANGO_COSTS)
            self.verify = hasher.verify
            # No async API: what an asyncio application does with a blocking call.
            self.verify_async = lambda stored, password: asyncio.to_thread(
                hasher.verify, stored, password)
            self.mismatch = argon2.exceptions.VerifyMismatchError
            self.version = importlib.metadata.version("argon2-cffi")
            self.backend = "libargon2 (bundled with argon2-cffi-bindings)"
        else:  # django
            import django
            from django.conf import settings

            settings.configure(
                SECRET_KEY="argonishche load test: no secret", INSTALLED_APPS=[],
                PASSWORD_HASHERS=["argonishche.contrib.django.Argon2PasswordHasher"])
            django.setup()
            import argonishche
            from django.contrib.auth.hashers import check_password

            # Django's strings are its algorithm name, "argon2", then the PHC string.
            self.verify = lambda stored, password: check_password(password, "argon2" + stored)
            self.mismatch = argonishche.VerifyMismatchError  # never raised: Django says False
            self.version = f"Django {django.get_version()}, argonishche {argonishche.__version__}"
            self.budget = lambda: argonishche.memory_budget()._asdict()
            self.backend = argonishche.selected_backend("argon2")

    def outcome(self, result: object) -> str:
        return "ok" if result is True else "mismatch" if result is False else \
            f"error returned {result!r}"


def run_threads(library: Library, cases: list[dict[str, str]], deadline: float) -> dict:
    n = len(cases)
    results: list[tuple[str, float, float] | None] = [None] * n
    # Released together, by this thread once all exist: every verification asks for its
    # memory at the same moment.
    barrier = threading.Barrier(n + 1, timeout=deadline)

    def verify(i: int) -> None:
        try:
            bytearray(65536)  # a malloc of its own: glibc gives the thread its arena now
            barrier.wait()
        except threading.BrokenBarrierError:
            results[i] = ("error the burst never started (a thread could not start)", 0.0, 0.0)
            return
        start = time.perf_counter()
        try:
            outcome = library.outcome(library.verify(cases[i]["stored"], cases[i]["password"]))
        except library.mismatch:
            outcome = "mismatch"
        except Exception as exc:  # recorded: the test says which, and fails on any
            outcome = describe(exc)
        end = time.perf_counter()
        results[i] = (outcome, start, end)
        say(f"DONE {i} {outcome.split()[0]} {end - start:.3f}")

    threads = []
    for i in range(n):
        thread = threading.Thread(target=verify, args=(i,), name=f"login-{i}", daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # "can't start new thread": under RLIMIT_AS, stacks count
            barrier.abort()
            for j in range(i, n):
                results[j] = (describe(exc), 0.0, 0.0)
            break
        threads.append(thread)
    limit_address_space(ARGUMENTS.rlimit_as)
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass  # a thread could not start: recorded above
    end_by = time.monotonic() + deadline
    for thread in threads:
        thread.join(max(0.0, end_by - time.monotonic()))
    hung = [t.name for t in threads if t.is_alive()]
    return {"results": results, "hung": hung}


def run_asyncio(library: Library, cases: list[dict[str, str]], deadline: float) -> dict:
    import asyncio

    n = len(cases)
    results: list[tuple[str, float, float] | None] = [None] * n

    async def verify(i: int) -> None:
        start = time.perf_counter()
        try:
            outcome = library.outcome(
                await library.verify_async(cases[i]["stored"], cases[i]["password"]))
        except library.mismatch:
            outcome = "mismatch"
        except Exception as exc:
            outcome = describe(exc)
        end = time.perf_counter()
        results[i] = (outcome, start, end)
        say(f"DONE {i} {outcome.split()[0]} {end - start:.3f}")

    async def burst() -> list[str]:
        tasks = [asyncio.create_task(verify(i)) for i in range(n)]
        _, pending = await asyncio.wait(tasks, timeout=deadline)
        for task in pending:
            task.cancel()
        return [f"coroutine {tasks.index(t)}" for t in pending]

    limit_address_space(ARGUMENTS.rlimit_as)  # the pools' threads come within it
    hung = asyncio.run(burst())
    return {"results": results, "hung": hung}


def main() -> int:
    with open(ARGUMENTS.cases, encoding="utf-8") as file:
        cases = json.load(file)
    library = Library(ARGUMENTS.library)
    say("STARTED")
    result: dict[str, object] = {
        "library": library.name, "version": library.version, "backend": library.backend,
        "mode": ARGUMENTS.mode, "limit": LIMIT, "n": len(cases), "pid": os.getpid()}
    result["rss_before_kib"] = status_kib("VmRSS")
    if library.budget is not None:
        result["budget_before"] = library.budget()

    run = run_threads if ARGUMENTS.mode == "threads" else run_asyncio
    ran = run(library, cases, ARGUMENTS.deadline)
    finished = [r for r in ran["results"] if r is not None]
    started = [r for r in finished if r[2] > 0]
    result["outcomes"] = [r[0] if r is not None else "error never finished"
                          for r in ran["results"]]
    result["latencies_s"] = [r[2] - r[1] for r in started]
    result["wall_s"] = (max(r[2] for r in started) - min(r[1] for r in started)) \
        if started else None
    result["hung"] = ran["hung"]
    result["rss_after_burst_kib"] = status_kib("VmRSS")
    result["hwm_kib"] = status_kib("VmHWM")
    # Address space, which RLIMIT_AS limits: thread stacks and malloc's arenas are reserved
    # whole, however little of them is touched.
    result["vm_peak_kib"] = status_kib("VmPeak")
    if library.budget is not None:
        result["budget_after_burst"] = library.budget()
    if not ran["hung"]:
        # Idle, as a server between bursts: argonishche gives its idle work memory back after
        # ARGONISHCHE_MEMORY_IDLE_SECONDS.
        time.sleep(ARGUMENTS.idle_wait)
        result["idle_wait_s"] = ARGUMENTS.idle_wait
        result["rss_after_idle_kib"] = status_kib("VmRSS")
        if library.budget is not None:
            result["budget_after_idle"] = library.budget()
    say("RESULT " + json.dumps(result))
    if ran["hung"]:
        os._exit(3)  # the hung threads would keep the interpreter from exiting
    return 0


if __name__ == "__main__":
    sys.exit(main())
