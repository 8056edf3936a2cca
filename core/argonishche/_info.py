"""The runtime report behind ``python -m argonishche info`` (modelled on numpy.show_runtime)."""

from __future__ import annotations

import platform
import sys
from typing import Any

from . import _features, _record, _registry, _settings, _work_memory
from ._trust import cpu_gate, record_store
from ._wording import counted, stated
from .exceptions import ArgonishcheError, SettingError


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def budget_lines(budget: dict[str, Any]) -> list[str]:
    """The work-memory budget's lines of the report (also for ``tune``)."""
    return [
        f"Work memory: a budget of {_mib(budget['budget'])} for the whole process "
        f"({budget['source']})",
        f"  held now {_mib(budget['held'])} ({_mib(budget['in_use'])} in use by "
        f"{counted(budget['running'], 'hash', 'hashes')}, {_mib(budget['idle'])} idle); "
        f"high-water mark {_mib(budget['high_water'])}; "
        f"{counted(budget['waiting'], 'hash', 'hashes')} waiting",
        f"  idle memory goes back to the OS after {budget['idle_seconds']:g} s unused; a hash "
        f"waits at most {budget['wait_seconds']:g} s for room "
        f"(ARGONISHCHE_MEMORY_BUDGET_MIB, _IDLE_SECONDS, _WAIT_SECONDS)",
        f"  huge pages for kept memory: {'on' if budget['huge_pages'] else 'off'} "
        f"({budget['huge_pages_why']})",
        f"  since start: {counted(budget['maps'], 'mapping')} made, "
        f"{counted(budget['reuses'], 'hash', 'hashes')} reused kept memory, {budget['waits']} "
        f"waited for room",
    ]


def collect(*, cpuinfo: bool = True) -> dict[str, Any]:
    """Everything ``info`` shows, as plain data (the ``--json`` form).

    :param cpuinfo: also ask py-cpuinfo (about 1 s) for the brand and its flags, as a
        cross-check of the in-process probe.
    """
    report: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "arch": cpu_gate._machine(),
        "built_here": _built_here(),
        "cpu": {"probed": sorted(cpu_gate.probed_features())},
        "settings": {},
        "backends": [],
        "plugins": [],
        "selected": dict.fromkeys(_registry.ALGORITHMS),
        "selection": {},
        "error": None,
        "allocator": None,
        "allocators": [],
        "memory_budget": None,
    }
    try:
        reg = _registry.get()
    except SettingError as exc:  # nothing else can be reported truthfully until it is fixed
        report["error"] = str(exc)
        report["settings"] = _settings.given()
        return report
    report["settings"] = dict(reg.settings.given)
    report["cpu"]["usable"] = sorted(cpu_gate.features())
    report["cpu"]["disabled_by_env"] = sorted(cpu_gate.disabled_features())
    report["backends"] = [_record.asdict(b) for b in reg.report()]
    report["plugins"] = [_record.asdict(p) for p in reg.plugins]
    report["error"] = str(reg.selection_error) if reg.selection_error else None
    report["allocator"] = reg.allocator_name
    report["allocators"] = [{"name": name, "description": allocator.description,
                             "distribution": dist, "cached_bytes": allocator.cached_bytes()}
                            for name, (allocator, dist) in sorted(reg.allocators.items())]
    report["memory_budget"] = _work_memory.memory_budget()._asdict()
    try:
        reg.allocator()
    except ArgonishcheError as exc:
        report["allocator_error"] = str(exc)
    # Records found but not trusted (another owner's, writable by others, not a regular file).
    report["ignored_records"] = [[path, why] for path, why in sorted(record_store.ignored.items())]
    report["records"] = records_report()
    for algorithm in _registry.ALGORITHMS:
        try:
            report["selected"][algorithm] = reg.selected_name(algorithm)
        except ArgonishcheError:
            report["selected"][algorithm] = None
    report["selection"] = {a: choice._asdict() for a, choice in reg.choices.items()}
    if cpuinfo:
        try:
            flags, brand = cpu_gate.cpuinfo_flags()
        except Exception as exc:  # noqa: BLE001 - a report must not fail on its second opinion
            report["cpu"]["py_cpuinfo"] = {"error": repr(exc)}
        else:
            known = set(_features.NAMES)
            probed = cpu_gate.probed_features()
            report["cpu"]["brand"] = brand
            report["cpu"]["py_cpuinfo"] = {
                "flags": sorted(flags & known),
                # /proc/cpuinfo shows the host; under an emulator, or with AVX state disabled
                # by the OS, it claims more than the CPU running us can do.
                "only_in_py_cpuinfo": sorted((flags & known) - probed),
                "only_in_probe": sorted(probed - flags),
            }
    return report


def records_report() -> dict[str, Any]:
    """Where records go, whether they can be written there, and what this process did that no
    record will spare the next one (``info``'s "Records" lines)."""
    from ._remembered_selection import RECORD_KIND as SELECTION_KIND
    from ._trust.certification import RECORD_KIND

    home, source = _settings.records_home()
    why_not = next(filter(None, (record_store.writable_directory(kind)[1]
                                 for kind in (RECORD_KIND, SELECTION_KIND))), "")
    return {"directory": home, "source": source if home else "", "why_not_writable": why_not,
            "unwritten": [[path, why] for path, why in sorted(record_store.unwritten.items())],
            "not_remembered": [{"what": what, "seconds": seconds, "why": why}
                               for what, (seconds, why)
                               in sorted(record_store.not_remembered.items())]}


def records_lines(records: dict[str, Any]) -> list[str]:
    """The "Records" lines of the report."""
    lines = ["Records (certifications, selection): "
             + (record_store.shown(records["directory"]) if records["directory"] else "none")
             + (f" (from {records['source']})" if records["source"] else "")]
    if records["why_not_writable"]:
        lines.append(f"  cannot be written: {records['why_not_writable']}; nothing new is "
                     f"remembered: each process certifies again, in a child interpreter, every "
                     f"non-built-in kernel module without a record there (ARGONISHCHE_CACHE_DIR: "
                     f"a writable directory, or one certified in advance: docs/backends.md)")
    for cost in records["not_remembered"]:
        lines.append(f"  {cost['what']}: certified in this process, not remembered, "
                     f"{cost['seconds']:.2f} s (each process pays it): {cost['why']}")
    lines += [f"  not written: {path}: {why}" for path, why in records["unwritten"]
              if not any(path in cost["why"] for cost in records["not_remembered"])]
    return lines


def describe(choice: dict[str, Any]) -> str:
    """How a selection choice (a Choice as a dict) was made, in one line."""
    how = choice["how"]
    if how == "remembered":
        return f"measured {choice['measured_at']}, remembered: {choice['why']}"
    if how == "measured":
        return f"measured now: {choice['why']}"
    return stated(how, choice["why"])  # "forced by ARGONISHCHE_BACKEND=...", said once


def _built_here() -> list[str]:
    """The built-in backends compiled for this machine's architecture (None: not installed)."""
    try:
        # Installed from backends/ (package-dir): mypy run on the source tree does not find it.
        from argonishche_backends.table import (  # type: ignore[import-not-found, unused-ignore]
            BUILTIN_BACKENDS,
        )
    except Exception:  # noqa: BLE001 - the backends section reports the failure
        return []
    return [row.name for row in BUILTIN_BACKENDS]


def render(report: dict[str, Any]) -> str:
    """The human-readable form of :func:`collect`'s report."""
    cpu_report = report["cpu"]
    lines = [f"argonishche on Python {report['python']}, {report['platform']}"]
    if "brand" in cpu_report:
        lines.append(f"CPU: {cpu_report['brand']}")
    built = report.get("built_here") or []
    if built == ["ref"]:
        lines.append(f"Built-in backends for {report['arch']}: ref (only ref is built here: "
                     f"argonishche has no vector kernels for {report['arch']})")
    else:
        lines.append(f"Built-in backends for {report['arch']}: {', '.join(built) or 'none'}")
    source = {"x86_64": "CPUID/XGETBV in-process", "aarch64": "HWCAP/sysctl in-process"}.get(
        report["arch"], f"no probe for {report['arch']}")
    lines.append(f"CPU features ({source}): {' '.join(cpu_report['probed'])}")
    if cpu_report.get("disabled_by_env"):
        lines.append("  hidden by ARGONISHCHE_DISABLE_CPU_FEATURES: "
                     + " ".join(cpu_report["disabled_by_env"]))
    cross = cpu_report.get("py_cpuinfo")
    if cross and "error" in cross:
        lines.append(f"py-cpuinfo: failed: {cross['error']}")
    elif cross:
        lines.append(f"py-cpuinfo flags (reads /proc/cpuinfo): {' '.join(cross['flags'])}")
        if cross["only_in_py_cpuinfo"]:
            lines.append("  not confirmed by the probe (emulated CPU or OS-disabled state?): "
                         + " ".join(cross["only_in_py_cpuinfo"]))
    lines.append("")
    lines.append("Settings (ARGONISHCHE_* variables set): " + (", ".join(
        f"{name}={value}" for name, value in sorted(report["settings"].items())) or "none"))
    fastest = {algorithm: min(choice["ns_per_kib"].values())
               for algorithm, choice in report["selection"].items() if choice["ns_per_kib"]}
    if report["backends"]:
        lines += ["", "Backends (by priority, the ladder; the selection below says which is "
                      "used):"]
    usable = [b for b in report["backends"] if b["state"] in _registry.USABLE_STATES]
    ladder = usable[0]["name"] if usable else None  # listed by priority: the ladder's pick first
    for b in report["backends"]:
        needs = ",".join(b["cpu_features"]) or "-"
        test = f"{b['selftest_ms']:.2f} ms" if b["selftest_ms"] is not None else "-"
        lines.append(f"  {b['name']:<10} {b['state']:<16} prio {b['priority']:<4} needs {needs:<24}"
                     f" self-test {test:<9} {b['distribution']}")
        if b["reason"]:
            lines.append(f"  {'':<10} reason: {b['reason']}")
        if b["ns_per_kib"]:
            lines.append(f"  {'':<10} measured: " + ", ".join(
                f"{algorithm} {ns:,.0f} ns/KiB " + ("(the fastest)" if ns == fastest[algorithm]
                                                    else f"({ns / fastest[algorithm]:.2f}x "
                                                         f"the fastest's time)")
                for algorithm, ns in sorted(b["ns_per_kib"].items())))
        if b["name"] == ladder or b["selected_for"]:
            lines.append(f"  {'':<10} " + "; ".join(filter(None, (
                "the ladder's pick (the highest priority usable)" if b["name"] == ladder else "",
                f"selected for {', '.join(b['selected_for'])} (see below)"
                if b["selected_for"] else "not selected: see below"))))
    if report["plugins"]:
        lines += ["", "Plugins (entry points of the 'argonishche' group, and the built-in "
                      "allocators):"]
    for plugin in report["plugins"]:
        lines.append(f"  {plugin['name']:<20} {plugin['state']:<8} {plugin['distribution']}"
                     + (f": {plugin['reason']}" if plugin["reason"] else ""))
    lines.append("")
    by_name = {b["name"]: b for b in report["backends"]}
    for algorithm, name in report["selected"].items():
        chosen = by_name.get(name or "")
        origin = "" if chosen is None else (
            f" (built in; {chosen['validation']})" if chosen["builtin"] else
            f" (first-party plugin: {chosen['distribution']}; {chosen['validation']})"
            if chosen["first_party"] else
            f" (THIRD-PARTY: {chosen['distribution']}; {chosen['validation']})")
        lines.append(f"Selected for {algorithm}: {name or 'none'}{origin}")
        choice = report["selection"].get(algorithm)
        if choice:
            lines.append(f"  {describe(choice)}")
    records = sorted({c["record"] for c in report["selection"].values() if c["record"]})
    if records:
        lines.append(f"  remembered in {', '.join(records)} (ARGONISHCHE_SELECT=measure or "
                     f"argonishche tune measures again)")
    if report["allocators"]:
        lines += ["", "Allocators (work memory; ARGONISHCHE_ALLOCATOR or allocator= picks one):"]
    for a in report["allocators"]:
        mark = "default" if a["name"] == report["allocator"] else ""
        lines.append(f"  {a['name']:<10} {mark:<8} {a['description']} [{a['distribution']}]")
        if a["cached_bytes"]:
            lines.append(f"  {'':<19} keeps {a['cached_bytes'] / 2**20:.1f} MiB idle now")
    if report["memory_budget"]:
        lines += ["", *budget_lines(report["memory_budget"])]
    if report.get("allocator_error"):
        lines.append(f"ERROR: {report['allocator_error']}")
    if report["allocators"]:
        lines.append("Wipe: work memory is securely wiped before it is freed or reused, unless a "
                     "call passes wipe=False")
    if report["error"]:
        lines.append(f"ERROR: {report['error']}")
    if report.get("records"):
        lines += ["", *records_lines(report["records"])]
    lines += [f"Ignored record {path}: {why}" for path, why in report.get("ignored_records", [])]
    return "\n".join(lines)
