"""Find ``argonishche`` entry points without importing importlib.metadata.

Importing importlib.metadata pulls in email, zipfile, csv and pathlib: it takes about as long as a
whole argon2-cffi import and first hash (measured in docs/benchmarks.md, "Measurements behind the
kernels' choices"), and it would be paid on the first hash of every process.  Entry points are a
small file per installed distribution (``*.dist-info/entry_points.txt``), so they are read
directly: the same distributions in the same order, the first of a name on sys.path winning, as
importlib.metadata does.
"""

from __future__ import annotations

import importlib
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ._named_tuple import NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterator

_METADATA_SUFFIXES = (".dist-info", ".egg-info")


class Distribution(NamedTuple):
    name: str
    version: str


class EntryPoint(NamedTuple):
    """The part of importlib.metadata.EntryPoint the registry uses."""

    name: str
    value: str
    dist: Distribution

    def load(self) -> object:
        module_name, _, attribute = self.value.partition(":")
        obj: object = importlib.import_module(module_name.strip())
        for part in filter(None, attribute.strip().split(".")):
            obj = getattr(obj, part)
        return obj


def _distribution(entry: str) -> Distribution | None:
    """The distribution of a metadata directory's name, ``name-version[-pyX.Y].dist-info``
    (or ``.egg-info``), with ``_`` in the name read as ``-``; None for any other name.
    String methods rather than a regular expression: ``re`` would be imported for this alone."""
    for suffix in _METADATA_SUFFIXES:
        if entry.endswith(suffix):
            parts = entry[:-len(suffix)].split("-")
            break
    else:
        return None
    if len(parts) == 3 and parts[2].startswith("py"):
        parts.pop()
    if len(parts) != 2 or not all(parts):
        return None
    return Distribution(parts[0].replace("_", "-"), parts[1])


def _normalize(name: str) -> str:
    """PEP 503's normalized name: runs of ``-``, ``_`` and ``.`` as one ``-``, lower case."""
    name = name.replace("_", "-").replace(".", "-")
    while "--" in name:
        name = name.replace("--", "-")
    return name.lower()


def _section(text: str, group: str) -> Iterator[tuple[str, str]]:
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, _, value = line.partition("=")
            yield name.strip(), value.strip()


def entry_points(group: str, path: list[str] | None = None) -> list[EntryPoint]:
    """Entry points of *group* from the distributions installed on *path* (sys.path)."""
    return entry_point_groups((group,), path)[group]


def entry_point_groups(groups: tuple[str, ...],
                       path: list[str] | None = None) -> dict[str, list[EntryPoint]]:
    """Entry points of each of *groups* from the distributions installed on *path* (sys.path),
    each distribution's file read once."""
    found: dict[str, list[EntryPoint]] = {group: [] for group in groups}
    seen: set[str] = set()
    for directory in sys.path if path is None else path:
        try:
            names = sorted(os.listdir(directory or "."))
        except OSError:
            continue
        for entry in names:
            dist = _distribution(entry)
            if dist is None:
                continue
            if _normalize(dist.name) in seen:
                continue
            seen.add(_normalize(dist.name))
            try:
                with open(os.path.join(directory or ".", entry, "entry_points.txt"),
                          encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            for group in groups:
                found[group].extend(EntryPoint(name, value, dist)
                                    for name, value in _section(text, group))
    return found
