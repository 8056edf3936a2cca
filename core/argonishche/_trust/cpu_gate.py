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

from .. import _features, _settings
from .._core import ffi, lib

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


def _cpuid(leaf: int, subleaf: int = 0) -> list[int] | None:
    registers = ffi.new("uint32_t[4]")
    return list(registers) if lib.argonishche_cpuid(leaf, subleaf, registers) else None


def _cpuid_text(words: list[int]) -> str:
    """CPUID's ASCII answers (vendor, brand) from little-endian register words."""
    raw = b"".join(word.to_bytes(4, "little") for word in words)
    return " ".join(raw.decode("ascii", "replace").replace("\0", " ").split())


@functools.lru_cache(maxsize=1)
def identity() -> str:
    """This CPU as remembered measurements are keyed (a record made on another CPU must never
    be used): on x86-64 the vendor, the family/model/stepping signature (CPUID leaf 1's EAX),
    the brand string, every CPUID word the gate reads and XCR0; on aarch64 the HWCAP words the
    gate reads and, where Linux shows it, MIDR_EL1 (implementer, part and revision); elsewhere
    only the architecture.  One line of text; microseconds to make."""
    arch = _machine()
    parts = [arch]
    rows = [f for f in _features.FEATURES if f.arch == arch]
    if arch == _features.X86_64:
        vendor, signature = _cpuid(0), _cpuid(1)
        if vendor is None or signature is None:
            return f"{arch} without CPUID"
        parts += [_cpuid_text([vendor[1], vendor[3], vendor[2]]), f"signature={signature[0]:08x}"]
        highest = _cpuid(0x80000000)
        if highest is not None and highest[0] >= 0x80000004:
            brand = [word for leaf in (0x80000002, 0x80000003, 0x80000004)
                     for word in (_cpuid(leaf) or [0, 0, 0, 0])]
            parts.append(f"brand={_cpuid_text(brand).replace(' ', '_')}")
        for leaf, subleaf, register in sorted({(p.leaf, p.subleaf, p.register) for p in
                                               (f.probe for f in rows)
                                               if isinstance(p, _features.Cpuid)}):
            words = _cpuid(leaf, subleaf)
            value = "-" if words is None else f"{words[_REGISTER_INDEX[register]]:08x}"
            parts.append(f"cpuid.{leaf:x}.{subleaf}.{register}={value}")
        parts.append(f"xcr0={lib.argonishche_xcr0():x}")
    elif arch == _features.AARCH64:
        for word in sorted({f.probe.word for f in rows if isinstance(f.probe, _features.Hwcap)}):
            parts.append(f"hwcap{word}={lib.argonishche_hwcap(word):x}")
        try:
            with open("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
                      encoding="ascii") as f:
                parts.append(f"midr={f.read().strip()}")
        except (OSError, UnicodeDecodeError):
            pass
    return " ".join(parts)


def cpuinfo_flags() -> tuple[frozenset[str], str]:
    """(flags, brand) from py-cpuinfo, for reports only; slow (about 1 s), see module docstring."""
    import cpuinfo  # type: ignore[import-untyped]  # py-cpuinfo ships no types

    info = cpuinfo.get_cpu_info()
    return frozenset(info.get("flags", ())), info.get("brand_raw", "unknown CPU")
