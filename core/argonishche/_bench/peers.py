"""The other Python libraries timed against ours: argon2-cffi, PyNaCl and cryptography.

Each is imported only when a run asks for peers, and left out where it is not installed or does
not support the point; none of them is a dependency of argonishche.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .points import PASSWORD, SALT, Point
from .timing import Subject


def _installed(name: str) -> ModuleType | None:
    """Module *name*, or None where it cannot be imported.

    Through importlib rather than an import statement: a type checker then needs neither the
    peer installed nor its types (mypy --strict on the installed wheel, with or without the
    peers: tests/project/test_typing_wheel.py).  The peers' attributes are Any from here on.
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def peer_argon2_subjects(point: Point) -> list[Subject]:
    """argon2-cffi, PyNaCl and cryptography, where installed and where they support *point*."""
    peers = []
    low_level = _installed("argon2.low_level")
    if low_level is not None:
        kind = {"d": low_level.Type.D, "i": low_level.Type.I, "id": low_level.Type.ID}[point.type]
        peers.append(Subject("argon2-cffi", lambda: low_level.hash_secret_raw(
            PASSWORD, SALT, time_cost=point.time_cost, memory_cost=point.memory_cost,
            parallelism=point.parallelism, hash_len=32, type=kind)))
    pwhash = _installed("nacl.pwhash")
    if pwhash is not None:
        module = {"i": getattr(pwhash, "argon2i", None),
                  "id": getattr(pwhash, "argon2id", None)}.get(point.type)
        # libsodium: one lane only, and its own minimums (argon2i: t >= 3).
        if (point.parallelism == 1 and module is not None
                and point.time_cost >= getattr(module, "OPSLIMIT_MIN", 1)
                and point.memory_cost * 1024 >= getattr(module, "MEMLIMIT_MIN", 8192)):
            kdf = module.kdf
            peers.append(Subject("PyNaCl", lambda: kdf(
                32, PASSWORD, SALT, opslimit=point.time_cost,
                memlimit=point.memory_cost * 1024)))
    crypto_argon2 = _installed("cryptography.hazmat.primitives.kdf.argon2")
    if crypto_argon2 is not None:
        cls = getattr(crypto_argon2, {"d": "Argon2d", "i": "Argon2i", "id": "Argon2id"}
                      [point.type], None)
        if cls is not None:
            peers.append(Subject("cryptography", lambda: cls(
                salt=SALT, length=32, iterations=point.time_cost, lanes=point.parallelism,
                memory_cost=point.memory_cost).derive(PASSWORD)))
    return peers


def is_ours(name: str) -> bool:
    """Whether a subject's row is argonishche's: ``argonishche (selected)``, ``backend X`` or
    ``allocator X``."""
    return name.strip().startswith(("argonishche", "backend", "allocator"))
