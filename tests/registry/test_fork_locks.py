"""fork() never waits on code argonishche does not own, and plugin code never waits on the
registry (issue 24 item 1, issue 23 item 4).

Each test runs a program in a fresh interpreter with a timeout: a deadlock is a
``subprocess.TimeoutExpired``, never a stuck run.  Children made by ``os.fork()`` in those
programs arm ``signal.alarm`` so that a hung child dies too.  The plugins are real: a directory
on ``PYTHONPATH`` holding ``<dist>.dist-info/entry_points.txt`` and the module it names, which is
what the registry's entry-point reader (``argonishche._entry_points``) finds, as it finds an
installed wheel.
"""

from __future__ import annotations

import textwrap

import pytest
from support import KNOWN_TAG, run_python

pytestmark = pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork()")

TIMEOUT = 30

#: What every program starts with: a hash whose tag is known, and a reaped child's outcome.
PRELUDE = """
import os, signal, sys, threading, time, warnings
import argonishche
from argonishche import _lazy_import, _process_registry, _registry
warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork() with threads running

def tag():
    return argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32,
                                   parallelism=1, hash_len=32, type="id").hex()

def reap(pid):
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
"""


def plugin_on_path(directory, module: str, source: str, entry_name: str = "slowpoke") -> str:
    """A plugin distribution *directory* holds: ``slowpoke-1.0.dist-info`` whose entry point
    *entry_name* is the module *module* made of *source*.  Returns the directory."""
    dist_info = directory / "slowpoke-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "entry_points.txt").write_text(f"[argonishche]\n{entry_name} = {module}\n")
    (directory / f"{module}.py").write_text(textwrap.dedent(source))
    return str(directory)


def run(code: str, **environ: str):
    # Without the tox env's ARGONISHCHE_* (a forced built-in defers every plugin): the
    # children here load plugins, as a default start-up does.
    result = run_python(PRELUDE + textwrap.dedent(code), timeout=TIMEOUT, settings=False,
                        **environ)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_fork_while_a_thread_builds_and_warnings_go_to_logging():
    # issue 24's reproducer: the build warns (a typo in ARGONISHCHE_DISABLE_BACKENDS), the
    # warning goes to logging, and logging's fork hook (registered after argonishche's, so run
    # first) holds logging's lock while fork() waits for the registry's.
    result = run("""
        import logging
        logging.basicConfig()  # a handler, whose lock is one more the build must not hold
        logging.captureWarnings(True)
        warnings.simplefilter("always")  # every round warns, and so logs
        outcomes = []
        for _ in range(15):
            _registry.reset()
            threading.Thread(target=argonishche.backends).start()
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            outcomes.append(reap(pid))
        print("ok", outcomes.count(0))
    """, ARGONISHCHE_DISABLE_BACKENDS="typo")
    assert result.stdout.split() == ["ok", "15"]
    assert "typo" in result.stderr  # the warning is still given (after the build)


def test_fork_while_a_plugin_imports_a_lazy_name(tmp_path):
    # The plugin's import does `from argonishche import blake2b`: the lazy-name lock and the
    # registry lock, taken by the builder and by fork() in opposite orders before the fix.
    path = plugin_on_path(tmp_path, "lazy_name_plugin", """
        import time
        time.sleep(0.05)  # fork() comes now, while the plugin is being imported
        from argonishche import blake2b
    """)
    result = run(f"""
        outcomes = []
        for _ in range(5):
            _registry.reset()
            sys.modules.pop("lazy_name_plugin", None)
            vars(argonishche).pop("blake2b", None)  # the name is looked up lazily again
            builder = threading.Thread(target=argonishche.backends)
            builder.start()
            time.sleep(0.01)
            pid = os.fork()
            if pid == 0:
                signal.alarm(20)
                os._exit(0 if tag() == {KNOWN_TAG.hex()!r} else 1)
            outcomes.append(reap(pid))
            builder.join()
        plugin = [p for p in _registry.get().plugins if p.name == "slowpoke"]
        print(outcomes, plugin[0].state)
    """, PYTHONPATH=path)
    assert result.stdout.split("\n")[0] == "[0, 0, 0, 0, 0] loaded"


def test_fork_while_a_failing_plugin_logs(tmp_path):
    # logging imported after argonishche: its fork hook runs first and holds logging's lock;
    # the plugin logs as it fails, and its failure is a warning that goes to logging too.
    path = plugin_on_path(tmp_path, "failing_plugin", """
        import logging, time
        time.sleep(0.05)  # fork() comes now
        logging.getLogger("failing_plugin").error("cannot start")
        raise ImportError("failing_plugin is broken")
    """)
    result = run("""
        import logging
        logging.basicConfig()  # a handler, whose lock is one more the build must not hold
        logging.captureWarnings(True)
        warnings.simplefilter("always")
        outcomes = []
        for _ in range(5):
            _registry.reset()
            sys.modules.pop("failing_plugin", None)
            builder = threading.Thread(target=argonishche.backends)
            builder.start()
            time.sleep(0.01)
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            outcomes.append(reap(pid))
            builder.join()
        print(outcomes)
    """, PYTHONPATH=path)
    assert result.stdout.strip() == "[0, 0, 0, 0, 0]"
    assert "failing_plugin is broken" in result.stderr  # reported, after the build


def test_a_plugin_import_that_waits_for_a_hashing_thread_finishes(tmp_path):
    # issue 23: the plugin's import joins (no timeout) a thread that hashes.  That thread must
    # not wait for the registry the import is part of: it hashes with the built-ins meanwhile.
    path = plugin_on_path(tmp_path, "joining_plugin", f"""
        import threading
        import argonishche
        tags = []
        worker = threading.Thread(target=lambda: tags.append(argonishche.argon2_hash(
            b"password", b"somesalt", time_cost=1, memory_cost=32, parallelism=1,
            hash_len=32, type="id").hex()))
        worker.start()
        worker.join()
        assert tags == [{KNOWN_TAG.hex()!r}], tags
        # The C blake2b type finds no registry yet: it asks, and gets the built-ins' table.
        digests = []
        worker = threading.Thread(target=lambda: digests.append(argonishche.blake2b(b"x")))
        worker.start()
        worker.join()
        import hashlib
        assert digests[0].digest() == hashlib.blake2b(b"x").digest()
    """)
    result = run("""
        print(tag())
        print([(p.name, p.state) for p in _registry.get().plugins if p.name == "slowpoke"])
    """, PYTHONPATH=path)
    assert result.stdout.split("\n")[:2] == [KNOWN_TAG.hex(), "[('slowpoke', 'loaded')]"]


def test_a_child_forked_while_plugins_load_uses_the_builtins_and_says_why(tmp_path):
    path = plugin_on_path(tmp_path, "sleepy_plugin", """
        import time
        time.sleep(0.5)  # fork() comes now
    """)
    result = run(f"""
        builder = threading.Thread(target=argonishche.backends)
        builder.start()
        time.sleep(0.1)
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)
            ok = tag() == {KNOWN_TAG.hex()!r}
            records = [p for p in _registry.get().plugins if p.name == "slowpoke"]
            print("child", ok, records[0].state, records[0].reason, flush=True)
            os._exit(0)
        print("child exit", reap(pid), flush=True)
        builder.join()
        print("parent", [p.state for p in _registry.get().plugins if p.name == "slowpoke"])
    """, PYTHONPATH=path)
    lines = result.stdout.splitlines()
    assert lines[0] == ("child True not-loaded not loaded: the process forked while plugins "
                        "were loading"), lines
    assert lines[1:] == ["child exit 0", "parent ['loaded']"]


def test_warnings_of_the_build_are_given_with_no_lock_held(tmp_path):
    # What a warning runs (here a showwarning hook; logging's in a server) may need a thread
    # that needs the registry: the probe thread must find both fork-waited locks free.
    path = plugin_on_path(tmp_path, "broken_plugin", """
        raise ImportError("broken_plugin is broken")
    """)
    result = run("""
        probes = []
        def showwarning(message, *args, **kwargs):
            def probe():
                free = []
                for lock in (_lazy_import.lock, _process_registry._lock):
                    free.append(lock.acquire(timeout=2))
                    if free[-1]:
                        lock.release()
                probes.append((str(message)[:40], free))
            prober = threading.Thread(target=probe)
            prober.start()
            prober.join()
        warnings.showwarning = showwarning
        argonishche.backends()
        for probe in probes:
            print(*probe)
    """, PYTHONPATH=path, ARGONISHCHE_DISABLE_BACKENDS="typo")
    assert result.stdout.splitlines() == [
        "argonishche: plugin 'slowpoke' from slow [True, True]",
        "argonishche: ARGONISHCHE_DISABLE_BACKEND [True, True]"]


#: A plugin registering the allocator "slowpool" after a slow import that logs.
SLOW_ALLOCATOR_PLUGIN = """
    import logging, time
    import argonishche
    time.sleep(0.4)  # the other thread acts now
    logging.getLogger("slow_allocator").warning("loaded")

    class SlowPool(argonishche.Allocator):
        name = "slowpool"
        def acquire(self, size):
            return bytearray(size)
        def release(self, buffer):
            pass

    @argonishche.hookimpl
    def argonishche_register_allocators(register):
        register(SlowPool())
"""


def test_fork_while_deferred_plugins_load_for_an_allocator(tmp_path):
    # With a built-in backend forced, plugins are imported only when an allocator no imported
    # plugin registered is asked for: that import too runs with the fork-waited lock released.
    path = plugin_on_path(tmp_path, "slow_allocator", SLOW_ALLOCATOR_PLUGIN)
    result = run(f"""
        import logging
        logging.basicConfig()
        tag()  # the registry is built; the plugin is deferred
        found = []
        loader = threading.Thread(
            target=lambda: found.append(_registry.get().allocator("slowpool").name))
        loader.start()
        time.sleep(0.1)
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)
            ok = tag() == {KNOWN_TAG.hex()!r}
            try:
                _registry.get().allocator("slowpool")
            except argonishche.BackendError:
                pass
            records = [p for p in _registry.get().plugins if p.name == "slowpoke"]
            print("child", ok, records[0].state, records[0].reason, flush=True)
            os._exit(0)
        print("child exit", reap(pid), flush=True)
        loader.join()
        print("parent", found)
    """, PYTHONPATH=path, ARGONISHCHE_BACKEND="ref")
    assert result.stdout.splitlines() == [
        "child True not-loaded not loaded: the process forked while plugins were loading",
        "child exit 0", "parent ['slowpool']"]


def test_threads_asking_while_plugins_load_get_the_builtins_or_wait_for_a_plugins_part(
        tmp_path):
    path = plugin_on_path(tmp_path, "slow_allocator", SLOW_ALLOCATOR_PLUGIN)
    result = run(f"""
        builder = threading.Thread(target=argonishche.backends)
        builder.start()
        time.sleep(0.1)
        meanwhile = _registry.get()  # the builder is in the plugin's import
        records = [p for p in meanwhile.plugins if p.name == "slowpoke"]
        print(meanwhile.provisional, tag() == {KNOWN_TAG.hex()!r}, records[0].state)
        print(meanwhile.report()[0].builtin, meanwhile.choices["argon2"].how)
        # Only the plugin has this allocator: the provisional registry waits for the build.
        print(meanwhile.allocator("slowpool").name, _registry.get().provisional)
        builder.join()
    """, PYTHONPATH=path)
    assert result.stdout.splitlines() == ["True True not-loaded", "True priority",
                                          "slowpool False"]
