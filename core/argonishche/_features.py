"""Every CPU feature argonishche knows, one row each: the only place their facts are written.

Read by the CPU gate (:mod:`argonishche._cpu`, which asks the C probe for raw CPUID and XCR0
words and interprets them with these rows), by backend descriptors (``Backend.cpu_features``
must name rows here), by the build (:mod:`argonishche.build` turns a backend's features into the
compiler's target string) and by the registry (which maps a compiled module's recorded target
back to rows, and refuses a module compiled for more than its descriptor declares).

Pure data and standard library only: build scripts load this file by path before argonishche is
installed.  A new architecture adds rows (and, once, a probe for its kind of feature word, such
as Linux's AT_HWCAP on aarch64), not new code paths in the gate.

Bit positions are from the Intel 64 and IA-32 Architectures Software Developer's Manual,
vol. 2A, CPUID ("Information Returned by CPUID Instruction", leaves 1 and 7),
and vol. 1, section 13.3 for XCR0; the same bits are in GCC's ``<cpuid.h>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

#: XCR0 state components the OS must save before vector registers of that width may be used:
#: SSE (bit 1) and AVX (bit 2) for 256-bit; opmask (5), ZMM0-15 upper halves (6) and ZMM16-31
#: (7) as well for AVX-512.  A CPU can report AVX while the OS does not save ymm registers.
XCR0_YMM = 0x06
XCR0_ZMM = 0xE6


class Cpuid(NamedTuple):
    """Where CPUID reports a feature: ``leaf``/``subleaf`` in, ``bit`` of ``register`` out."""

    leaf: int
    subleaf: int
    register: str   # "eax", "ebx", "ecx" or "edx"
    bit: int


class CpuFeature(NamedTuple):
    """One CPU feature.

    :param name: as /proc/cpuinfo and py-cpuinfo spell it; what ``Backend.cpu_features`` and
        ``ARGONISHCHE_DISABLE_CPU_FEATURES`` use.
    :param arch: the ``platform.machine()`` family it belongs to.
    :param compiler_target: what GCC's and clang's ``target`` pragma/attribute call it.
    :param implies: the features it builds on: hiding one of them hides this one too, and a
        module compiled for this one may use their instructions as well.
    :param cpuid: where CPUID reports it.
    :param xcr0: XCR0 bits the OS must have enabled, 0 if none.
    """

    name: str
    arch: str
    compiler_target: str
    implies: tuple[str, ...]
    cpuid: Cpuid
    xcr0: int = 0


X86_64 = "x86_64"

FEATURES: tuple[CpuFeature, ...] = (
    CpuFeature("sse2", X86_64, "sse2", (), Cpuid(1, 0, "edx", 26)),
    CpuFeature("ssse3", X86_64, "ssse3", ("sse2",), Cpuid(1, 0, "ecx", 9)),
    CpuFeature("sse4_1", X86_64, "sse4.1", ("ssse3",), Cpuid(1, 0, "ecx", 19)),
    CpuFeature("avx", X86_64, "avx", ("sse4_1",), Cpuid(1, 0, "ecx", 28), XCR0_YMM),
    CpuFeature("avx2", X86_64, "avx2", ("avx",), Cpuid(7, 0, "ebx", 5), XCR0_YMM),
    CpuFeature("avx512f", X86_64, "avx512f", ("avx2",), Cpuid(7, 0, "ebx", 16), XCR0_ZMM),
    CpuFeature("avx512vl", X86_64, "avx512vl", ("avx512f",), Cpuid(7, 0, "ebx", 31), XCR0_ZMM),
    CpuFeature("avx512bw", X86_64, "avx512bw", ("avx512f",), Cpuid(7, 0, "ebx", 30), XCR0_ZMM),
)

BY_NAME: dict[str, CpuFeature] = {feature.name: feature for feature in FEATURES}
BY_COMPILER_TARGET: dict[str, CpuFeature] = {f.compiler_target: f for f in FEATURES}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def closure(names: Iterable[str]) -> frozenset[str]:
    """*names* and every feature they imply, transitively."""
    found: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending.extend(BY_NAME[name].implies)
    return frozenset(found)


def compiler_target(names: frozenset[str] | set[str] | tuple[str, ...]) -> str:
    """The compiler's target string for *names*, in table order: ``"sse2,ssse3,sse4.1"``."""
    return ",".join(f.compiler_target for f in FEATURES if f.name in names)


def from_compiler_target(target: str) -> frozenset[str]:
    """The features a module compiled for *target* may use (implied ones included).

    :raises ValueError: *target* names something this table does not know, so no CPU gate
        could vouch for it.
    """
    names = []
    for part in filter(None, (p.strip() for p in target.split(","))):
        feature = BY_COMPILER_TARGET.get(part)
        if feature is None:
            raise ValueError(f"compiled for {part!r}, which is not a known CPU feature "
                             f"({', '.join(BY_COMPILER_TARGET)})")
        names.append(feature.name)
    return closure(names)
