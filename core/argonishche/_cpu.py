"""Which CPU features the running process may use.

The gate that decides is :func:`features`: the answers of the CPU or OS running this process, read
through the table in :mod:`argonishche._features` (the C probes in ``core/csrc/cpu_features.c``
and ``cpu_features_arm.c`` only return raw words):

- x86-64: CPUID executed in this process, with AVX/AVX-512 only when XCR0 shows the OS saves
  their registers.  It is what Intel SDE and QEMU emulate.
- aarch64: Linux's AT_HWCAP/AT_HWCAP2 words of this process (which QEMU user mode fills from the
  emulated CPU model), or macOS's ``hw.optional.*`` sysctls (untested: no macOS in CI).
- any other architecture: no rows, so no features, and only backends needing none can run.

It costs microseconds, and it is the only source the registry trusts.

py-cpuinfo is a second opinion for reports: it reads /proc/cpuinfo, which shows the *host* CPU even
under an emulator, and its full probe takes about a second (it starts a child Python), so it is
only called by :func:`cpuinfo_flags` for ``info`` and never on the import or first-hash path.

``ARGONISHCHE_DISABLE_CPU_FEATURES=avx2,avx512f`` hides features from the gate (never adds any),
the way numpy's NPY_DISABLE_CPU_FEATURES does, to test dispatch without an emulator.
"""

from __future__ import annotations

import functools
import os
import sys

from . import _features, _settings
from ._core import ffi, lib

_REGISTER_INDEX = {"eax": 0, "ebx": 1, "ecx": 2, "edx": 3}


def _machine() -> str:
    """This process's architecture, as the feature table spells it (``x86_64``, ``aarch64``)."""
    if hasattr(os, "uname"):
        name = os.uname().machine
    else:  # Windows; platform costs a millisecond to import, so only where it is needed
        import platform

        name = platform.machine()
    return _features.arch_of(name)


def probed_features() -> frozenset[str]:
    """Features the CPU/OS reports to this process, before any user masking."""
    rows = [f for f in _features.FEATURES if f.arch == _machine()]
    cpuid_rows = [(row, row.probe) for row in rows if isinstance(row.probe, _features.Cpuid)]
    hwcap_rows = [(row, row.probe) for row in rows if isinstance(row.probe, _features.Hwcap)]
    return _probe_cpuid(cpuid_rows) | _probe_hwcap(hwcap_rows)


def _probe_cpuid(rows: list[tuple[_features.CpuFeature, _features.Cpuid]]) -> frozenset[str]:
    """x86: CPUID bits, each feature also needing the XCR0 state its registers need."""
    if not rows:
        return frozenset()
    xcr0 = lib.argonishche_xcr0()
    answers: dict[tuple[int, int], list[int] | None] = {}
    found = set()
    for row, cpuid in rows:
        key = (cpuid.leaf, cpuid.subleaf)
        if key not in answers:
            registers = ffi.new("uint32_t[4]")
            answers[key] = list(registers) if lib.argonishche_cpuid(*key, registers) else None
        words = answers[key]
        if words is None or not words[_REGISTER_INDEX[cpuid.register]] >> cpuid.bit & 1:
            continue
        if xcr0 & row.xcr0 == row.xcr0:
            found.add(row.name)
    return frozenset(found)


def _probe_hwcap(rows: list[tuple[_features.CpuFeature, _features.Hwcap]]) -> frozenset[str]:
    """aarch64: the HWCAP words on Linux, the sysctl flags on macOS (0 elsewhere: nothing)."""
    if sys.platform == "darwin":  # UNTESTED: no macOS/arm64 machine runs the suite
        return frozenset(row.name for row, hwcap in rows
                         if lib.argonishche_sysctl_flag(hwcap.sysctl.encode("ascii")))
    words = {word: lib.argonishche_hwcap(word) for word in {hwcap.word for _, hwcap in rows}}
    return frozenset(row.name for row, hwcap in rows if words[hwcap.word] >> hwcap.bit & 1)


def disabled_features() -> frozenset[str]:
    """Features hidden by ``ARGONISHCHE_DISABLE_CPU_FEATURES`` (validated by the settings)."""
    return _settings.current().disabled_cpu_features


def usable(probed: frozenset[str], disabled: frozenset[str]) -> frozenset[str]:
    """*probed* minus *disabled*, minus every feature whose prerequisites are then missing."""
    result = set(probed - disabled)
    changed = True
    while changed:
        changed = False
        for name in list(result):
            if not set(_features.BY_NAME[name].implies) <= result:
                result.discard(name)
                changed = True
    return frozenset(result)


@functools.lru_cache(maxsize=1)
def features() -> frozenset[str]:
    """Features the kernels may use: probed, minus disabled ones and what depends on them."""
    return usable(probed_features(), disabled_features())


def cpuinfo_flags() -> tuple[frozenset[str], str]:
    """(flags, brand) from py-cpuinfo, for reports only; slow (about 1 s), see module docstring."""
    import cpuinfo  # type: ignore[import-untyped]  # py-cpuinfo ships no types

    info = cpuinfo.get_cpu_info()
    return frozenset(info.get("flags", ())), info.get("brand_raw", "unknown CPU")
