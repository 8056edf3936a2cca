"""Every CPU feature argonishche knows, one row each: the only place their facts are written.

Read by the CPU gate (:mod:`argonishche._trust.cpu_gate`, which asks the C probe for raw words:
CPUID and XCR0 on x86-64, the auxiliary vector's AT_HWCAP/AT_HWCAP2 on Linux/aarch64, sysctl flags
on macOS/arm64, and interprets them with these rows), by backend descriptors
(``Backend.cpu_features`` must name rows here), by the build (:mod:`argonishche.build` turns a
backend's features into the compiler's target string) and by the registry (which maps a
compiled module's recorded target back to rows, and refuses a module compiled for more than its
descriptor declares).

Pure data and standard library only: build scripts load this file by path before argonishche is
installed.  A new architecture adds rows (and, once, a probe kind for its feature words, as
:class:`Hwcap` is for aarch64), not new code paths in the gate.

Sources of the facts:

- x86-64: the Intel 64 and IA-32 Architectures Software Developer's Manual, vol. 2A, CPUID
  ("Information Returned by CPUID Instruction", leaves 1 and 7), and vol. 1, section 13.3 for
  XCR0; the same bits are in GCC's ``<cpuid.h>``.
- aarch64, Linux: the HWCAP bits of arch/arm64/include/uapi/asm/hwcap.h (``HWCAP_ASIMD`` is
  ``1 << 1``, ``HWCAP_SHA3`` is ``1 << 17``, both in AT_HWCAP), described in the kernel's
  Documentation/arch/arm64/elf_hwcaps.rst.
- aarch64, macOS: the ``hw.optional.*`` sysctl names of Apple's "Determining instruction set
  characteristics" (``hw.optional.AdvSIMD``, ``hw.optional.arm.FEAT_SHA3``).
- Compiler targets: GCC's "AArch64 Function Attributes" and "-march" extension names (``+simd``;
  GCC 12's ``<arm_neon.h>`` defines the SHA3 intrinsics under ``arch=armv8.2-a+sha3``, so a
  function calling them must be compiled for at least that, which ``+sha3`` alone is not:
  "inlining failed ... target specific option mismatch").
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple, TypeAlias
elif __package__:
    from ._named_tuple import NamedTuple
else:  # loaded by path by build.py, where the package cannot be imported
    from typing import NamedTuple


if TYPE_CHECKING:
    from collections.abc import Iterable

#: XCR0 state components the OS must save before vector registers of that width may be used:
#: SSE (bit 1) and AVX (bit 2) for 256-bit; opmask (5), ZMM0-15 upper halves (6) and ZMM16-31
#: (7) as well for AVX-512.  A CPU can report AVX while the OS does not save ymm registers.
XCR0_YMM = 0x06
XCR0_ZMM = 0xE6


class Cpuid(NamedTuple):
    """x86: where CPUID reports a feature: ``leaf``/``subleaf`` in, ``bit`` of ``register`` out."""

    leaf: int
    subleaf: int
    register: str   # "eax", "ebx", "ecx" or "edx"
    bit: int


class Hwcap(NamedTuple):
    """aarch64: where the OS reports a feature.

    :param word: 1 for Linux's AT_HWCAP, 2 for AT_HWCAP2 (``getauxval``).
    :param bit: the bit of that word (``HWCAP_SHA3 == 1 << 17``: 17).
    :param sysctl: macOS's name for it, an integer sysctl that is 1 when present.
    """

    word: int
    bit: int
    sysctl: str


#: How a row's feature is probed: one kind per architecture.
Probe: TypeAlias = Cpuid | Hwcap


class CpuFeature(NamedTuple):
    """One CPU feature.

    :param name: as /proc/cpuinfo and py-cpuinfo spell it; what ``Backend.cpu_features`` and
        ``ARGONISHCHE_DISABLE_CPU_FEATURES`` use.
    :param arch: the ``platform.machine()`` family it belongs to.
    :param arch: the architecture it belongs to (:data:`ARCHES`, as :func:`arch_of` spells it).
    :param compiler_target: what GCC's ``target`` pragma/attribute calls it (one
        comma-separated term); the name recorded in a kernel table's ``compiled_for``.
    :param implies: the features it builds on: hiding one of them hides this one too, and a
        module compiled for this one may use their instructions as well.
    :param probe: where the CPU or the OS reports it: :class:`Cpuid` on x86-64, :class:`Hwcap`
        on aarch64.
    :param xcr0: x86-64 only: XCR0 bits the OS must have enabled, 0 if none.
    :param clang_target: what clang's ``target`` attribute calls it, where that differs from
        GCC's ("" if it does not): on aarch64 clang 14 refuses ``arch=...`` terms and silently
        ignores ``+simd``-style ones, then fails in its code generator.
    """

    name: str
    arch: str
    compiler_target: str
    implies: tuple[str, ...]
    probe: Probe
    xcr0: int = 0
    clang_target: str = ""


X86_64 = "x86_64"
AARCH64 = "aarch64"
#: The architectures the table has rows for.
ARCHES: tuple[str, ...] = (X86_64, AARCH64)
#: Other spellings of them: ``platform.machine()`` on Windows (AMD64, ARM64) and macOS (arm64),
#: and the last part of ``sysconfig.get_platform()`` (win-amd64, macosx-11.0-arm64).
ARCH_ALIASES: dict[str, str] = {"amd64": X86_64, "x64": X86_64, "arm64": AARCH64}

FEATURES: tuple[CpuFeature, ...] = (
    CpuFeature("sse2", X86_64, "sse2", (), Cpuid(1, 0, "edx", 26)),
    CpuFeature("ssse3", X86_64, "ssse3", ("sse2",), Cpuid(1, 0, "ecx", 9)),
    CpuFeature("sse4_1", X86_64, "sse4.1", ("ssse3",), Cpuid(1, 0, "ecx", 19)),
    CpuFeature("avx", X86_64, "avx", ("sse4_1",), Cpuid(1, 0, "ecx", 28), XCR0_YMM),
    CpuFeature("avx2", X86_64, "avx2", ("avx",), Cpuid(7, 0, "ebx", 5), XCR0_YMM),
    CpuFeature("avx512f", X86_64, "avx512f", ("avx2",), Cpuid(7, 0, "ebx", 16), XCR0_ZMM),
    CpuFeature("avx512vl", X86_64, "avx512vl", ("avx512f",), Cpuid(7, 0, "ebx", 31), XCR0_ZMM),
    CpuFeature("avx512bw", X86_64, "avx512bw", ("avx512f",), Cpuid(7, 0, "ebx", 30), XCR0_ZMM),
    # ASIMD (NEON) is in every ARMv8-A CPU Linux and macOS run on; it is probed all the same, so
    # that a backend needing it is gated like any other.
    CpuFeature("asimd", AARCH64, "+simd", (), Hwcap(1, 1, "hw.optional.AdvSIMD"),
               clang_target="neon"),
    # "arch=armv8.2-a+sha3": see the module docstring (SHA3 is an ARMv8.2-A extension; every CPU
    # reporting it implements ARMv8.2-A).
    CpuFeature("sha3", AARCH64, "arch=armv8.2-a+sha3", ("asimd",),
               Hwcap(1, 17, "hw.optional.arm.FEAT_SHA3"), clang_target="sha3"),
)

BY_NAME: dict[str, CpuFeature] = {feature.name: feature for feature in FEATURES}
BY_COMPILER_TARGET: dict[str, CpuFeature] = {f.compiler_target: f for f in FEATURES}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def arch_of(machine: str) -> str:
    """*machine* (``platform.machine()``, ``os.uname().machine``) as the table spells it."""
    machine = machine.lower()
    return ARCH_ALIASES.get(machine, machine)


def arch_of_platform(platform_tag: str) -> str:
    """The architecture of a ``sysconfig.get_platform()`` tag: ``"linux-aarch64"`` ->
    ``"aarch64"``, ``"macosx-11.0-arm64"`` -> ``"aarch64"``, ``"win-amd64"`` -> ``"x86_64"``
    (``"win32"`` -> ``"x86"``; ``"macosx-10.9-universal2"`` stays ``"universal2"``: a
    fat binary has no one architecture)."""
    tag = platform_tag.lower()
    if tag == "win32":
        return "x86"
    return arch_of(tag.rsplit("-", 1)[-1])


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
    """GCC's target string for *names*, in table order: ``"sse2,ssse3,sse4.1"``."""
    return ",".join(f.compiler_target for f in FEATURES if f.name in names)


def clang_compiler_target(names: frozenset[str] | set[str] | tuple[str, ...]) -> str:
    """clang's target string for *names*, in table order: ``"neon,sha3"`` on aarch64."""
    return ",".join(f.clang_target or f.compiler_target for f in FEATURES if f.name in names)


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
