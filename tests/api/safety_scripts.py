"""Programs that attack one promise each: a right tag or an exception, never a crash or a hang,
with threads, fork() and signals.  Each runs in a fresh interpreter with a timeout (a hang is a
failure, never a stuck test run), prints one line of counts, and is scaled by *scale*: the main
suite runs them small (tests/api/test_server_safety.py), ``tox -e stress`` large
(tests/stress/test_server_safety_stress.py).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: A child that does not finish in this many seconds has hung (the work itself takes a small
#: fraction of it).
CHILD_DEADLINE = 30

PRELUDE = f"""
import os, random, signal, sys, threading, time
import argonishche
from argonishche import _allocators

ARENA, LOCKED = _allocators.BUILTIN[1], _allocators.BUILTIN[3]  # importing builds nothing
SCALE = int(sys.argv[1])
COSTS = dict(time_cost=1, memory_cost=256, parallelism=1)
_reference = []


def hash_ok(**options):
    # The reference is made on first use, not at start-up: some programs need the library
    # untouched until they start their threads.
    if not _reference:
        _reference.append(argonishche.argon2_hash(b"pw", b"somesalt", allocator="system",
                                                  **COSTS))
    return argonishche.argon2_hash(b"pw", b"somesalt", **COSTS, **options) == _reference[0]


def wait_child(pid):
    # 'ok', 'failed' (exit status) or 'hung' (killed after {CHILD_DEADLINE} s).
    deadline = time.monotonic() + {CHILD_DEADLINE}
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "ok" if os.waitstatus_to_exitcode(status) == 0 else "failed"
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"


def rss_mib():
    # smaps_rollup walks the page tables: exact.  statm's count is kept per CPU and summed
    # lazily, and read 130 MiB high here after memory was unmapped by another thread.
    try:
        with open("/proc/self/smaps_rollup") as rollup:
            return next(int(line.split()[1]) for line in rollup if line.startswith("Rss:")) / 1024
    except OSError:  # before Linux 4.14
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
"""

SCRIPTS = {
    # Hashes on three threads while a fourth trims: each trim must leave busy memory alone.
    "trim_race": """
sys.setswitchinterval(1e-6)
wrong, errors, stop = [0], [], threading.Event()
def hasher():
    for _ in range(300 * SCALE):
        try:
            wrong[0] += not hash_ok()
        except Exception as exc:
            errors.append(repr(exc))
def trimmer():
    while not stop.is_set():
        try:
            argonishche.trim_memory()
        except Exception as exc:
            errors.append(repr(exc))
threads = [threading.Thread(target=hasher) for _ in range(3)]
trim = threading.Thread(target=trimmer)
for thread in [trim, *threads]:
    thread.start()
for thread in threads:
    thread.join()
stop.set(); trim.join()
print("wrong", wrong[0], "errors", len(errors))
""",
    # fork() while another thread builds the registry (the first use): the child must not
    # inherit a held lock.
    "fork_during_startup": """
results = []
threading.Thread(target=argonishche.backends, daemon=True).start()
time.sleep(random.random() * 0.01)
pid = os.fork()
if pid == 0:
    signal.alarm(20)
    os._exit(0 if hash_ok() else 1)
print("child", wait_child(pid))
""",
    # fork() while another thread imports a name `import argonishche` left for first use: the
    # child must not inherit the module half made, importlib's lock on it held by a thread the
    # child does not have.  The lazy modules are dropped before each round, so that every round
    # imports them again.
    "fork_during_lazy_import": """
LAZY_MODULES = ("argonishche._password_hasher", "argonishche._batch",
                "argonishche._extract_parameters")
outcomes = []
for _ in range(10 * SCALE):
    for name in LAZY_MODULES:
        sys.modules.pop(name, None)
    vars(argonishche).pop("PasswordHasher", None)
    # PasswordHasher's import, then _extract_parameters' (imported by _parameters at first use)
    threading.Thread(target=lambda: argonishche.PasswordHasher(**COSTS)._parameters,
                     daemon=True).start()
    time.sleep(random.random() * 0.004)
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)
        hasher = argonishche.PasswordHasher(**COSTS)
        encoded = hasher.hash("pw")
        os._exit(0 if hasher.verify(encoded, "pw") and not hasher.check_needs_rehash(encoded)
                 else 1)
    outcomes.append(wait_child(pid))
print(" ".join(sorted(set(outcomes))), len(outcomes))
""",
    # fork() while another thread trims: a new thread's hash in the child, and the child's
    # exit (which trims too), must not wait for a lock held by a thread that is not there.
    "fork_during_trim": """
stop = threading.Event()
def trimmer():
    while not stop.is_set():
        argonishche.trim_memory()
threading.Thread(target=trimmer, daemon=True).start()
outcomes = []
for _ in range(5 * SCALE):
    hash_ok()
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)
        results = []
        worker = threading.Thread(target=lambda: results.append(hash_ok()))
        worker.start(); worker.join()
        sys.exit(0 if results == [True] else 1)  # a normal exit: atexit trims as well
    outcomes.append(wait_child(pid))
stop.set()
print(" ".join(sorted(set(outcomes))), len(outcomes))
""",
    # fork() while another thread is in the middle of a hash: the child must hash right at
    # once, on its own thread and on a new one, and exit cleanly.
    "fork_mid_hash": """
stop = threading.Event()
def hasher():
    while not stop.is_set():
        argonishche.argon2_hash(b"x", b"somesalt", time_cost=1, memory_cost=4096,
                                parallelism=1)
threading.Thread(target=hasher, daemon=True).start()
time.sleep(0.05)
outcomes = []
for _ in range(5 * SCALE):
    time.sleep(random.random() * 0.01)
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)
        results = [hash_ok()]
        worker = threading.Thread(target=lambda: results.append(hash_ok()))
        worker.start(); worker.join()
        sys.exit(0 if results == [True, True] else 1)
    outcomes.append(wait_child(pid))
stop.set()
print(" ".join(sorted(set(outcomes))), len(outcomes))
""",
    # The locked allocator's memory after fork(): locks are not inherited, so the child must
    # not serve the parent's now-unlocked memory as "locked".
    "fork_locked": """
def locked_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmLck:"))
assert hash_ok(allocator="locked") and locked_kib() > 0
pid = os.fork()
if pid == 0:
    signal.alarm(20)
    dropped = LOCKED.cached_bytes() == 0 and locked_kib() == 0
    again = hash_ok(allocator="locked") and locked_kib() > 0
    os._exit(0 if dropped and again else 1)
print("child", wait_child(pid))
""",
    # Exceptions raised by a signal handler at random points of many hashes: afterwards the
    # thread's memory must still be the arena's to use and to trim.
    "signals": """
class Timeout(Exception):
    pass
def alarm(signum, frame):
    raise Timeout
signal.signal(signal.SIGALRM, alarm)
wrong = interrupted = 0
for _ in range(1000 * SCALE):
    try:
        signal.setitimer(signal.ITIMER_REAL, random.uniform(20e-6, 400e-6))
        wrong += not hash_ok(allocator="arena")
        signal.setitimer(signal.ITIMER_REAL, 0)
    except Timeout:
        interrupted += 1
while True:  # an alarm already due may still fire while the timer is being disarmed
    try:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        break
    except Timeout:
        pass
argonishche.trim_memory()
trimmed = ARENA.cached_bytes()
ok = hash_ok(allocator="arena")
print("wrong", wrong, "trimmed_left", trimmed, "reused", ok and ARENA.cached_bytes() > 0,
      "interrupted", interrupted > 0)
""",
    # Threads started without threading (as C libraries and embedding servers start them):
    # their memory is the process's, and goes back once it has been idle for the idle time.
    "thread_churn": """
import _thread
argonishche.set_memory_budget(idle_seconds=1)
baseline = rss_mib()
done = threading.Semaphore(0)
def work():
    try:
        argonishche.argon2_hash(b"x", b"somesalt", time_cost=1, memory_cost=16384,
                                parallelism=1)
    finally:
        done.release()
for _ in range(10 * SCALE):
    _thread.start_new_thread(work, ())
for _ in range(10 * SCALE):
    assert done.acquire(timeout=60)
# Idle memory leaves the list at once and is unmapped just after: wait for both.
deadline = time.monotonic() + 10
while (ARENA.cached_bytes() or rss_mib() - baseline >= 64) and time.monotonic() < deadline:
    time.sleep(0.01)
print("cached", ARENA.cached_bytes(), "grew_mib", round(rss_mib() - baseline))
""",
    # A burst of verifications at an attacker's cost (256 MiB, inside the default limits) on
    # a pool that stays alive: the burst holds no more than the budget while it runs (room for
    # two of them here), and nothing once the idle time has passed.
    "verify_burst": """
from concurrent.futures import ThreadPoolExecutor
argonishche.set_memory_budget(600, idle_seconds=1)
encoded = argonishche.argon2_hash_encoded(b"pw", b"somesalt", time_cost=1, memory_cost=262144,
                                          parallelism=1, allocator="system")
baseline = rss_mib()
with ThreadPoolExecutor(4) as pool:
    results = list(pool.map(lambda _: argonishche.argon2_verify(encoded, b"pw"), range(4)))
    held = argonishche.memory_budget()
    # Idle memory leaves the list at once and is unmapped just after: wait for both.
    deadline = time.monotonic() + 10
    while (ARENA.cached_bytes() or rss_mib() - baseline >= 128) and time.monotonic() < deadline:
        time.sleep(0.01)
    kept = ARENA.cached_bytes()
    grew = rss_mib() - baseline
print("verified", all(results), "high_water_mib", held.high_water // 2**20, "kept_mib",
      kept // 2**20, "grew_mib", round(grew))
""",
    # The work memory of a large hash with nothing kept is mapped and faulted in: other Python
    # threads must keep running meanwhile (the GIL released).
    "mapping_stall": """
def stall_during(run):
    worker = threading.Thread(target=run)
    worst, started = 0.0, time.perf_counter()
    last = started
    worker.start()
    while worker.is_alive():
        time.sleep(0.001)
        now = time.perf_counter()
        worst, last = max(worst, now - last), now
    worker.join()
    return worst, last - started
ratios = []
for _ in range(SCALE):  # nothing kept: the hash maps its memory afresh
    argonishche.trim_memory()
    worst, whole = stall_during(lambda: argonishche.argon2_hash(
        b"x", b"somesalt", time_cost=1, memory_cost=262144, parallelism=1))
    ratios.append(worst / whole)
print("worst_stall_percent_of_hash", round(100 * sorted(ratios)[len(ratios) // 2], 1))
""",
}

#: Programs for the input-reading promises; they need no fork, so they also run on threads.
SCRIPTS.update({
    # A bytearray salt changed by another thread mid-hash: the PHC string returned must
    # verify (the hash and the encoding must read one and the same salt).
    "salt_mutation": """
sys.setswitchinterval(1e-6)
salt, stop = bytearray(b"saltsalt"), threading.Event()
def mutate():
    while not stop.is_set():
        salt[random.randrange(8)] = random.randrange(256)
threading.Thread(target=mutate, daemon=True).start()
bad = 0
for _ in range(300 * SCALE):
    encoded = argonishche.argon2_hash_encoded(b"pw", salt, time_cost=1, memory_cost=64,
                                              parallelism=1)
    try:
        argonishche.argon2_verify(encoded, b"pw")
    except argonishche.VerifyMismatchError:
        bad += 1
stop.set()
print("unverifiable", bad)
""",
    # One memory= buffer given to two hashes at once: never two wrong tags; the second hash is
    # refused instead.
    "shared_memory": """
buffer = bytearray(argonishche.memory_size(256))
wrong, refused = [0], [0]
def hasher():
    for _ in range(100 * SCALE):
        try:
            wrong[0] += not hash_ok(memory=buffer)
        except argonishche.ParameterError as exc:
            assert "in use by another hash" in str(exc), exc
            refused[0] += 1
threads = [threading.Thread(target=hasher) for _ in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("wrong", wrong[0], "refused_some", refused[0] > 0)
""",
})


def run_script(name: str, scale: int = 1, *, python: str = sys.executable,
               timeout: float = 300) -> str:
    """Run script *name*; its output line.  A hang past *timeout* raises (a test failure)."""
    program = textwrap.dedent(PRELUDE) + textwrap.dedent(SCRIPTS[name])
    out = subprocess.run([python, "-c", program, str(scale)], capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, f"{name}: exit {out.returncode}\n{out.stderr[-3000:]}"
    return out.stdout.strip().splitlines()[-1]
