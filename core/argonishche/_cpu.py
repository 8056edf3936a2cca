"""Which CPU features the running process may use.

The gate that decides is :func:`features`: CPUID executed in this process, with AVX/AVX-512 only
when XGETBV shows the OS saves their registers (``core/csrc/cpu_features.c``).  It is what Intel SDE
and QEMU emulate, it costs microseconds, and it is the only source the registry trusts.

py-cpuinfo is a second opinion for reports: it reads /proc/cpuinfo, which shows the *host* CPU even
under an emulator, and its full probe takes about a second (it starts a child Python), so it is
only called by :func:`cpuinfo_flags` for ``info`` and never on the import or first-hash path.

``ARGONISHCHE_DISABLE_CPU_FEATURES=avx2,avx512f`` hides features from the gate (never adds any),
the way numpy's NPY_DISABLE_CPU_FEATURES does, to test dispatch without an emulator.
"""

from __future__ import annotations

import functools
import os

from ._core import lib
from .exceptions import ParameterError
from .hookspecs import CPU_FEATURE_NAMES

DISABLE_ENV = "ARGONISHCHE_DISABLE_CPU_FEATURES"

# Features implied by another: hiding sse2 must also hide everything built on it.
_IMPLIES = {
    "ssse3": "sse2", "sse4_1": "ssse3", "avx": "sse4_1", "avx2": "avx",
    "avx512f": "avx2", "avx512vl": "avx512f", "avx512bw": "avx512f",
}


def probed_features() -> frozenset[str]:
    """Features reported by CPUID/XGETBV in this process, before any user masking."""
    mask = lib.argonishche_cpu_features()
    return frozenset(name for name in CPU_FEATURE_NAMES
                     if mask & getattr(lib, "ARGONISHCHE_CPU_" + name.upper()))


def disabled_features(environ=os.environ) -> frozenset[str]:
    """Features hidden by ``ARGONISHCHE_DISABLE_CPU_FEATURES``; an unknown name is an error."""
    raw = environ.get(DISABLE_ENV, "")
    names = {part.strip().lower() for part in raw.replace(" ", ",").split(",") if part.strip()}
    unknown = names - set(CPU_FEATURE_NAMES)
    if unknown:
        raise ParameterError(f"{DISABLE_ENV}: unknown CPU feature(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(CPU_FEATURE_NAMES)}")
    return frozenset(names)


@functools.lru_cache(maxsize=1)
def features() -> frozenset[str]:
    """Features the kernels may use: probed, minus disabled ones and what depends on them."""
    usable = set(probed_features() - disabled_features())
    changed = True
    while changed:
        changed = False
        for feature, needs in _IMPLIES.items():
            if feature in usable and needs not in usable:
                usable.discard(feature)
                changed = True
    return frozenset(usable)


def cpuinfo_flags() -> tuple[frozenset[str], str]:
    """(flags, brand) from py-cpuinfo, for reports only; slow (about 1 s), see module docstring."""
    import cpuinfo

    info = cpuinfo.get_cpu_info()
    return frozenset(info.get("flags", ())), info.get("brand_raw", "unknown CPU")
