"""Which CPU features the running process may use.

The gate that decides is :func:`features`: CPUID executed in this process, with AVX/AVX-512 only
when XCR0 shows the OS saves their registers, read through the table in
:mod:`argonishche._features` (the C probe in ``core/csrc/cpu_features.c`` only returns raw
words).  It is what Intel SDE and QEMU emulate, it costs microseconds, and it is the only source
the registry trusts.

py-cpuinfo is a second opinion for reports: it reads /proc/cpuinfo, which shows the *host* CPU even
under an emulator, and its full probe takes about a second (it starts a child Python), so it is
only called by :func:`cpuinfo_flags` for ``info`` and never on the import or first-hash path.

``ARGONISHCHE_DISABLE_CPU_FEATURES=avx2,avx512f`` hides features from the gate (never adds any),
the way numpy's NPY_DISABLE_CPU_FEATURES does, to test dispatch without an emulator.
"""

from __future__ import annotations

import functools
import os

from . import _features, _settings
from ._core import ffi, lib

_REGISTER_INDEX = {"eax": 0, "ebx": 1, "ecx": 2, "edx": 3}


def _machine() -> str:
    if hasattr(os, "uname"):
        machine = os.uname().machine.lower()
    else:  # Windows; platform costs a millisecond to import, so only where it is needed
        import platform

        machine = platform.machine().lower()
    return {"amd64": _features.X86_64, "x64": _features.X86_64}.get(machine, machine)


def probed_features() -> frozenset[str]:
    """Features reported by CPUID/XCR0 in this process, before any user masking."""
    rows = [f for f in _features.FEATURES if f.arch == _machine()]
    if not rows:
        return frozenset()
    xcr0 = lib.argonishche_xcr0()
    answers: dict[tuple[int, int], list[int] | None] = {}
    found = set()
    for row in rows:
        key = (row.cpuid.leaf, row.cpuid.subleaf)
        if key not in answers:
            registers = ffi.new("uint32_t[4]")
            answers[key] = list(registers) if lib.argonishche_cpuid(*key, registers) else None
        words = answers[key]
        if words is None or not words[_REGISTER_INDEX[row.cpuid.register]] >> row.cpuid.bit & 1:
            continue
        if xcr0 & row.xcr0 == row.xcr0:
            found.add(row.name)
    return frozenset(found)


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
