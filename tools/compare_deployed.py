"""Two builds of argonishche against argon2-cffi at the Argon2id points people deploy, side by side.

    python tools/compare_deployed.py --before OLD/bin/python --after NEW/bin/python
    python tools/compare_deployed.py ... --first --pause 8     # the first hash in a new process

``argonishche bench --profile deployed`` measures one build against the peers; this puts two
builds in one table (before and after a change to the work memory), using only what every
build has (``argon2_hash(..., allocator=...)``), so the older one needs nothing new.

**Steady state** (the default): for each point, rounds alternate a process of each build; each
process times its build's default allocator, the ``system`` allocator and argon2-cffi, one hash
each in turn (interleaved), after one untimed hash of each, and reports medians.  Ratios are
argon2-cffi's median over ours, from the same process, then the median over the rounds (with
the rounds' min..max): above 1 means faster than argon2-cffi.  Every subject's tag is checked
against argon2-cffi's first.

**First hash** (``--first``): one new process per sample (import, a tiny warm-up hash, then one
timed hash at the point), alternating the builds' default and ``system`` allocators and
argon2-cffi; ``--pause`` sleeps before each process.  On a VM with free page reporting
(virtio-balloon), memory freed a few seconds earlier has gone back to the host and faults in
slower, for everyone: say which protocol a figure came from.

Both builds must have the same plugins installed (the same kernels), and argon2-cffi.  Prints a
Markdown table, and ``--json FILE`` keeps every sample.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

#: (t, m KiB, p, who uses it): Argon2id points from OWASP to RFC 9106's first profile.
POINTS = (
    (2, 19456, 1, "OWASP minimum"),
    (3, 65536, 4, "argon2-cffi, pwdlib, RFC 9106 second"),
    (1, 64512, 1, "63 MiB"),
    (1, 66560, 1, "65 MiB"),
    (2, 102400, 8, "Django's Argon2PasswordHasher"),
    (2, 262144, 4, "256 MiB"),
    (1, 1048576, 4, "1 GiB"),
    (1, 2097152, 4, "RFC 9106 first"),
)
SUBJECTS = ("default", "system", "argon2-cffi")

STEADY = r"""
import json, sys, time
import argon2.low_level as cffi
import argonishche
t, m, p, reps = map(int, sys.argv[1:5])
salt = b"saltsaltsaltsalt"
def ours(allocator):
    return lambda: argonishche.argon2_hash(b"password", salt, type="id", time_cost=t,
                                           memory_cost=m, parallelism=p, allocator=allocator)
subjects = {"default": ours(None), "system": ours("system"),
            "argon2-cffi": lambda: cffi.hash_secret_raw(b"password", salt, t, m, p, 32,
                                                        cffi.Type.ID)}
expected = subjects["argon2-cffi"]()
assert all(f() == expected for f in subjects.values()), "the tags differ"
times = {name: [] for name in subjects}
for _ in range(reps):
    for name, f in subjects.items():
        start = time.perf_counter(); f(); times[name].append(time.perf_counter() - start)
print(json.dumps({"times": times, "backend": argonishche.selected_backend("argon2")}))
"""

FIRST = r"""
import sys, time
t, m, p, who = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
salt = b"saltsaltsaltsalt"
if who == "argon2-cffi":
    import argon2.low_level as cffi
    cffi.hash_secret_raw(b"password", salt, 1, 8, 1, 32, cffi.Type.ID)
    f = lambda: cffi.hash_secret_raw(b"password", salt, t, m, p, 32, cffi.Type.ID)
else:
    import argonishche
    allocator = None if who == "default" else who
    argonishche.argon2_hash(b"password", salt, time_cost=1, memory_cost=8, parallelism=1,
                            allocator=allocator)
    f = lambda: argonishche.argon2_hash(b"password", salt, type="id", time_cost=t,
                                        memory_cost=m, parallelism=p, allocator=allocator)
start = time.perf_counter(); f(); print(time.perf_counter() - start)
"""


def steady(builds: dict[str, str], rounds: int, reps: int, timeout: float) -> dict:
    found: dict = {}
    for t, m, p, _ in POINTS:
        for _ in range(rounds):
            for build, python in builds.items():
                out = subprocess.run([python, "-c", STEADY, str(t), str(m), str(p), str(reps)],
                                     capture_output=True, text=True, timeout=timeout, check=True)
                sample = json.loads(out.stdout)
                found.setdefault(f"{t},{m},{p}", {}).setdefault(build, []).append(sample)
                print(f"  {build} t={t} m={m} p={p}: " + ", ".join(
                    f"{n} {statistics.median(v) * 1e3:.1f} ms"
                    for n, v in sample["times"].items()), file=sys.stderr, flush=True)
    return found


def first(builds: dict[str, str], rounds: int, pause: float, timeout: float) -> dict:
    found: dict = {}
    for t, m, p, _ in POINTS:
        for _ in range(rounds):
            for build, python in builds.items():
                for who in SUBJECTS:
                    time.sleep(pause)
                    out = subprocess.run([python, "-c", FIRST, str(t), str(m), str(p), who],
                                         capture_output=True, text=True, timeout=timeout,
                                         check=True)
                    found.setdefault(f"{t},{m},{p}", {}).setdefault(build, {}).setdefault(
                        who, []).append(float(out.stdout))
        print(f"  t={t} m={m} p={p} done", file=sys.stderr, flush=True)
    return found


def ratios_steady(samples: list[dict], who: str) -> list[float]:
    """argon2-cffi's median over *who*'s, per process."""
    return [statistics.median(s["times"]["argon2-cffi"]) / statistics.median(s["times"][who])
            for s in samples]


def cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def table(found: dict, builds: dict[str, str], mode: str) -> str:
    lines = ["| Argon2id point | who uses it | " + " | ".join(
        f"{build}: {who}" for build in builds for who in ("default", "system")) + " |",
        "|---" * (2 + 2 * len(builds)) + "|"]
    for t, m, p, who_uses in POINTS:
        row = [f"t={t}, {m // 1024} MiB, p={p}", who_uses]
        for build in builds:
            data = found[f"{t},{m},{p}"][build]
            for who in ("default", "system"):
                if mode == "steady":
                    row.append(cell(ratios_steady(data, who)))
                else:  # medians over the new processes; the ratio of the medians
                    ours, theirs = statistics.median(data[who]), statistics.median(
                        data["argon2-cffi"])
                    row.append(f"{theirs / ours:.2f}x ({ours * 1e3:.0f} ms vs "
                               f"{theirs * 1e3:.0f})")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the older build's python")
    parser.add_argument("--after", required=True, help="the newer build's python")
    parser.add_argument("--first", action="store_true", help="the first hash in a new process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5, help="hashes per subject per process")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds before each process")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    parser.add_argument("--json", help="also write every sample here")
    args = parser.parse_args()
    builds = {"before": args.before, "after": args.after}
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    mode = "first" if args.first else "steady"
    found = first(builds, args.rounds, args.pause, args.timeout) if args.first else \
        steady(builds, args.rounds, args.reps, args.timeout)
    print(f"{mode}: argon2-cffi's time / ours (median over {args.rounds} rounds, min-max); "
          f"CPU {cpu}" + (f"; {args.pause:g} s pause before each process" if args.first else ""))
    print(table(found, builds, mode))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"mode": mode, "cpu": cpu, "pause": args.pause, "samples": found}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
