"""The ``argonishche`` command (also ``python -m argonishche``)."""

from __future__ import annotations

import argparse
import json
import sys

from . import info, registry, selftest


def _info(args) -> int:
    report = info.collect(cpuinfo=not args.fast)
    print(json.dumps(report, indent=2) if args.json else info.render(report))
    return 1 if report["error"] else 0


def _selftest(args) -> int:
    reg = registry.get()
    status = 0
    for entry in reg.entries.values():
        if entry.table is None:
            print(f"{entry.name:<10} not run: {entry.state}"
                  + (f" ({entry.reason})" if entry.reason else ""))
            continue
        failures = selftest.run(entry.table, full=True)
        print(f"{entry.name:<10} {'FAIL' if failures else 'ok'}")
        for failure in failures:
            print(f"{'':<10} wrong: {failure}")
        status |= bool(failures)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="argonishche", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    info_parser = commands.add_parser("info", help="CPU features, backends and their state")
    info_parser.add_argument("--json", action="store_true", help="machine-readable output")
    info_parser.add_argument("--fast", action="store_true",
                             help="skip py-cpuinfo's cross-check (it takes about a second)")
    info_parser.set_defaults(run=_info)
    commands.add_parser("selftest", help="every known-answer vector on every usable backend"
                        ).set_defaults(run=_selftest)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
