"""What the benchmark knows of the machine: its description, its caches, and how busy it is."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def machine_description() -> str:
    """``"AMD EPYC, 2 CPUs, Python 3.11.7"`` for titles."""
    import platform

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def last_level_cache_bytes() -> int:
    """The largest CPU cache Linux reports for CPU 0 (its L3), or 0 where it says nothing."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    largest = 0
    try:
        names = os.listdir(base)
    except OSError:
        return 0
    for name in names:
        try:
            with open(f"{base}/{name}/size", encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        try:
            size = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
        except (ValueError, IndexError):
            continue
        largest = max(largest, size)
    return largest


def machine_state() -> dict[str, Any]:
    """Load average and CPU tick counters now, to compare before and after a run."""
    state: dict[str, Any] = {"cpus": os.cpu_count() or 1}
    try:
        state["loadavg"] = list(os.getloadavg())
    except OSError:
        state["loadavg"] = None
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal ...: steal is time the hypervisor gave
        # this VM's CPUs to someone else.
        state["ticks_total"], state["ticks_steal"] = sum(ticks[:8]), ticks[7]
    except (OSError, ValueError, IndexError):
        pass
    return state
