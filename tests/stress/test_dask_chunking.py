"""hash_many on a dask.distributed cluster: its chunks are sized by the cluster's worker threads,
not by the client machine's CPUs, and what the workers return verifies.

A LocalCluster of 2 workers x 2 threads (in this process's threads, or in processes of their
own), in a fresh interpreter with a timeout, as distributed changes pickling for the whole
process (see test_pickle_distributed.py) and a hung cluster must be a failure.  The client
claims one CPU there, so that chunking by the client's CPUs (4 tasks for 64 passwords) cannot
pass for chunking by the cluster's 4 threads (16 tasks).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="needs dask.distributed: pip install distributed (tox -e stress installs it)")

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import json, os, sys
from distributed import Client, LocalCluster
import argonishche

COSTS = dict(time_cost=1, memory_cost=64, parallelism=1)
PASSWORDS = [f"pw{i}" for i in range(64)]


def counted(executor):
    sizes = []
    submit = executor.submit
    def counting(fn, /, *args, **kwargs):
        sizes.append(len(args[0]))
        return submit(fn, *args, **kwargs)
    executor.submit = counting
    return sizes


out = {}
with LocalCluster(processes=PROCESSES, n_workers=2, threads_per_worker=2,
                  dashboard_address=None) as cluster, Client(cluster, timeout=60) as client:
    client.wait_for_workers(2, timeout=60)
    os.cpu_count = lambda: 1  # this "client machine": one CPU
    executor = client.get_executor()
    sizes = counted(executor)
    encoded = argonishche.hash_many(PASSWORDS, executor=executor, **COSTS)
    out["whole_cluster"] = sizes
    out["verified"] = sum(argonishche.argon2_verify(phc, pw)
                          for phc, pw in zip(encoded, PASSWORDS, strict=True))
    out["distinct"] = len(set(encoded))
    # get_executor(workers=[one]): only that worker's 2 threads run the tasks.
    one = sorted(client.nthreads())[0]
    executor = client.get_executor(workers=[one])
    sizes = counted(executor)
    encoded = argonishche.hash_many(PASSWORDS[:16], executor=executor, **COSTS)
    out["one_worker"] = sizes
    out["verified_one"] = sum(argonishche.argon2_verify(phc, pw)
                              for phc, pw in zip(encoded, PASSWORDS, strict=False))
print(json.dumps(out))
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_hash_many_chunks_by_the_clusters_threads(processes):
    code = textwrap.dedent(CHECK).replace("PROCESSES", str(processes))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-8000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["whole_cluster"] == [4] * 16, out  # 4 threads: about 4 tasks each
    assert out["verified"] == 64 and out["distinct"] == 64, out
    assert out["one_worker"] == [2] * 8, out  # 2 threads: 16 passwords in 8 tasks
    assert out["verified_one"] == 16, out
