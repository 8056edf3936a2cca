"""The witness: a built-in backend recomputes every Argon2 tag a third-party kernel makes.

Certification checks a third-party kernel once, over inputs it can afford; a kernel can still go
wrong after it (after N calls, beyond the distances checked, on a CPU it was not certified on).
A wrong tag stored as a password hash, or used as a key, is silent and permanent, so while a
third-party backend hashes Argon2 (``ARGONISHCHE_WITNESS=on``, the default):

* every tag it returns to be stored or used is computed again with the best usable built-in
  backend and compared (constant time) before it is returned: about twice the work;
* a verification that its tag would answer "mismatch" is confirmed by the built-in first; a
  match (a right password) is answered without a second hash;
* on any disagreement the built-in's tag is returned, the backend is quarantined for the process
  (the selection falls back), the failure is recorded for later processes
  (:func:`argonishche._trust.certification.remember_failure`), and a RuntimeWarning names the
  backend, its plugin and its distribution.

The built-ins and this repository's own plugin wheels (``_discovery.FIRST_PARTY``) are never
witnessed.  BLAKE2b is not: recomputing a digest costs as much as computing it, which takes
away the third-party kernel's only point, speed.  Certification guards it instead, over every
run length the core passes F and F's counter at every carry of both its words, with its flags
(:mod:`argonishche._trust.certification_blake2b`), so no message reaches a counter or run it did
not check.
"""

from __future__ import annotations

from collections.abc import Callable
from hmac import compare_digest
from typing import TYPE_CHECKING

from .. import _selection
from .._warn import warn
from ..exceptions import ArgonishcheError, BackendError

if TYPE_CHECKING:
    from .._core import CData
    from .._discovery import BackendEntry
    from .._parameter_checks import Argon2Params
    from .._registry import Registry

#: One Argon2 hash of the caller's inputs through (Argon2 table, BLAKE2b table).
Compute = Callable[["CData", "CData"], bytes]


def same(tag: bytes, other: bytes) -> bool:
    """Whether two tags are equal, in time independent of where they differ."""
    return compare_digest(tag, other)


def builtin_witness(reg: Registry) -> tuple[BackendEntry, CData]:
    """The built-in backend that witnesses, and its table: the fastest built-in the selection
    measured for Argon2, else the built-in the ladder ranks first (ref if nothing else runs).

    :raises BackendError: no built-in backend is usable (ref was disabled)."""
    usable = [(entry, table) for entry in list(reg.entries.values())
              if entry.builtin and (table := entry.table) is not None]
    if not usable:
        raise BackendError("a third-party backend hashes, and no built-in backend is usable to "
                           "witness its tags (is ref disabled?); set ARGONISHCHE_WITNESS=off "
                           "to trust it unwitnessed")
    choice = reg.choices.get("argon2")
    timed = {} if choice is None else choice.ns_per_kib
    measured = [pair for pair in usable if pair[0].name in timed]
    if measured:
        return min(measured, key=lambda pair: timed[pair[0].name])
    best = _selection.ladder(entry for entry, _ in usable)
    return next(pair for pair in usable if pair[0] is best)


def check(reg: Registry, owners: tuple[tuple[BackendEntry, CData], ...],
          params: Argon2Params, tag: bytes, compute: Compute) -> bytes:
    """The tag to return for a hash that computed *tag* with third-party tables: *owners* are
    (backend, table) as :meth:`Registry.hashing_tables` gives them.  *tag* if the built-in
    witness computes the same, else the witness's tag, once the wrong backend is quarantined."""
    witness, witness_table = builtin_witness(reg)
    truth = compute(witness_table, witness_table)
    if same(tag, truth):
        return tag
    culprit, table = owners[0]
    if len(owners) == 2:  # Argon2's and BLAKE2b's tables come from two third parties: which?
        if same(compute(table, witness_table), truth):  # their Argon2 kernel is right
            culprit, table = owners[1]
    _quarantine(reg, culprit, table, witness, params)
    return truth


def _quarantine(reg: Registry, entry: BackendEntry, table: CData, witness: BackendEntry,
                params: Argon2Params) -> None:
    reason = (f"gave a wrong Argon2 tag in service (argon2{params.type.label}, "
              f"v={params.version}, m={params.memory_cost}, t={params.time_cost}, "
              f"p={params.parallelism}); the built-in {witness.name} disagreed")
    if not reg.quarantine(entry.name, reason):
        return  # another thread found it first, and warned and recorded
    recorded = "not recorded: the kernel module has no file"
    if entry.module is not None:
        from . import certification

        try:
            certification.remember_failure(entry.module, table, [reason])
            recorded = ("recorded, so new processes do not use it until it is certified again "
                        "(argonishche selftest --full)")
        except (OSError, ArgonishcheError) as exc:  # the hash is answered all the same
            recorded = f"not recorded: {exc}"
    plugin = entry.plugin or "?"  # the entry point that registered it
    warn(f"argonishche: backend {entry.name!r} (kernel module {entry.backend.kernel_module}, "
         f"plugin {plugin!r} from {entry.distribution}) "
         f"{reason}: the built-in's tag was returned; {entry.name!r} is quarantined for this "
         f"process and the selection fell back; {recorded}")
