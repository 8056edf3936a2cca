"""The runtime report behind ``python -m argonishche info`` (modelled on numpy.show_runtime)."""

from __future__ import annotations

import dataclasses
import platform
import sys

from . import _cpu, _registry
from .exceptions import ArgonishcheError


def collect(*, cpuinfo: bool = True) -> dict:
    """Everything ``info`` shows, as plain data (the ``--json`` form).

    :param cpuinfo: also ask py-cpuinfo (about 1 s) for the brand and its flags, as a
        cross-check of the in-process probe.
    """
    reg = _registry.get()
    report = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": {
            "probed": sorted(_cpu.probed_features()),
            "usable": sorted(_cpu.features()),
            "disabled_by_env": sorted(_cpu.disabled_features()),
        },
        "backends": [dataclasses.asdict(b) for b in reg.report()],
        "selected": {},
        "forced": reg.forced,
        "select_mode": reg.select_mode,
        "disabled_backends": sorted(reg.disabled),
        "error": str(reg.selection_error) if reg.selection_error else None,
        "allocator": reg.allocator_name,
        "allocators": [{"name": name, "description": allocator.description,
                        "distribution": dist, "cached_bytes": allocator.cached_bytes()}
                       for name, (allocator, dist) in sorted(reg.allocators.items())],
    }
    for algorithm in _registry.ALGORITHMS:
        try:
            report["selected"][algorithm] = reg.selected_name(algorithm)
        except ArgonishcheError:
            report["selected"][algorithm] = None
    if cpuinfo:
        try:
            flags, brand = _cpu.cpuinfo_flags()
        except Exception as exc:  # noqa: BLE001 - a report must not fail on its second opinion
            report["cpu"]["py_cpuinfo"] = {"error": repr(exc)}
        else:
            known = set(_cpu.CPU_FEATURE_NAMES)
            probed = _cpu.probed_features()
            report["cpu"]["brand"] = brand
            report["cpu"]["py_cpuinfo"] = {
                "flags": sorted(flags & known),
                # /proc/cpuinfo shows the host; under an emulator, or with AVX state disabled
                # by the OS, it claims more than the CPU running us can do.
                "only_in_py_cpuinfo": sorted((flags & known) - probed),
                "only_in_probe": sorted(probed - flags),
            }
    return report


def render(report: dict) -> str:
    """The human-readable form of :func:`collect`'s report."""
    cpu_report = report["cpu"]
    lines = [f"argonishche on Python {report['python']}, {report['platform']}"]
    if "brand" in cpu_report:
        lines.append(f"CPU: {cpu_report['brand']}")
    lines.append(f"CPU features (CPUID/XGETBV in-process): {' '.join(cpu_report['probed'])}")
    if cpu_report["disabled_by_env"]:
        lines.append(f"  hidden by {_cpu.DISABLE_ENV}: {' '.join(cpu_report['disabled_by_env'])}")
    cross = cpu_report.get("py_cpuinfo")
    if cross and "error" in cross:
        lines.append(f"py-cpuinfo: failed: {cross['error']}")
    elif cross:
        lines.append(f"py-cpuinfo flags (reads /proc/cpuinfo): {' '.join(cross['flags'])}")
        if cross["only_in_py_cpuinfo"]:
            lines.append("  not confirmed by the probe (emulated CPU or OS-disabled state?): "
                         + " ".join(cross["only_in_py_cpuinfo"]))
    lines.append("")
    lines.append("Backends (best first):")
    for b in report["backends"]:
        needs = ",".join(b["cpu_features"]) or "-"
        test = f"{b['selftest_ms']:.2f} ms" if b["selftest_ms"] is not None else "-"
        lines.append(f"  {b['name']:<10} {b['state']:<16} prio {b['priority']:<4} needs {needs:<24}"
                     f" self-test {test:<9} {b['distribution']}")
        if b["reason"]:
            lines.append(f"  {'':<10} reason: {b['reason']}")
        if b["measured_us"]:
            lines.append(f"  {'':<10} measured: " + ", ".join(
                f"{algorithm} {us:,.0f} us" for algorithm, us in sorted(b["measured_us"].items())))
    lines.append("")
    for algorithm, name in report["selected"].items():
        lines.append(f"Selected for {algorithm}: {name or 'none'}")
    if report["forced"]:
        lines.append(f"Forced by {_registry.FORCE_ENV}={report['forced']}")
    lines.append(f"Selection: {report['select_mode']} ({_registry.SELECT_ENV}; 'measure' times "
                 f"the usable backends at start-up)")
    lines.append("")
    lines.append(f"Allocators (work memory; {_registry.ALLOCATOR_ENV} or allocator= picks one):")
    for a in report["allocators"]:
        mark = "default" if a["name"] == report["allocator"] else ""
        lines.append(f"  {a['name']:<10} {mark:<8} {a['description']} [{a['distribution']}]")
    if report["allocator"] not in {a["name"] for a in report["allocators"]}:
        lines.append(f"ERROR: {_registry.ALLOCATOR_ENV}={report['allocator']}: no such allocator")
    lines.append("Wipe: work memory is securely wiped before it is freed or reused, unless a call "
                 "passes wipe=False")
    if report["error"]:
        lines.append(f"ERROR: {report['error']}")
    return "\n".join(lines)
