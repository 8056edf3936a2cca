"""Known-answer vectors for Argon2 and BLAKE2b, with where each came from.

This module is pure data.  It is used (a) by the library's start-up self-test,
which runs every vector marked ``selftest=True`` against each kernel backend,
and (b) by the test suite, which runs all of them.

Provenance
----------
Every vector's ``source`` field says exactly where its expected output came
from:

* ``"RFC 7693 Appendix A"`` -- the worked BLAKE2b-512("abc") example.
* ``"RFC 9106 Section 5.x ..."`` -- the three Argon2 v0x13 test vectors
  (password 32 x 01, salt 16 x 02, secret 8 x 03, associated data 12 x 04,
  t=3, m=32 KiB, p=4, 32-byte tag).
* ``"BLAKE2 reference keyed KAT ..."`` -- entries of the BLAKE2 team's
  ``testvectors/blake2b-kat.txt`` (64-byte key 00..3f, message 00..n-1,
  64-byte digest), reproduced with CPython ``hashlib.blake2b``.
* ``"CPython 3.11 Lib/test/test_hashlib.py ..."`` -- the expected digest
  of CPython's ``test_case_blake2b_all_parameters`` (every BLAKE2b
  parameter, tree ones included).
* ``"phc-winner-argon2 src/test.c ..."`` -- the reference implementation's
  ``hashtest`` vectors whose memory cost is at most 256 KiB (32-byte tag,
  no secret / associated data).
* ``"computed with ..."`` -- outputs computed for this project by a trusted
  implementation: CPython 3.11.7 ``hashlib.blake2b`` for BLAKE2b, and
  argon2-cffi 25.1.0 with argon2-cffi-bindings 26.2.0
  (which statically links the phc-winner-argon2 reference C library) for
  Argon2, driven through ``argon2.low_level.core`` with a raw
  ``argon2_context`` so that the secret and associated data can be set.

All vectors were recomputed with those tools and compared byte for byte
before being recorded here.  Where a published value exists it was compared
too: the RFC 9106 tags with the CFRG test-vector text (draft-irtf-cfrg-argon2
Section 6, carried into RFC 9106 Section 5); RFC 7693's ``abc`` digest with
the RFC text; the Argon2d / Argon2i v0x10 tags with phc-winner-argon2
``kats/argon2d_v16`` and ``kats/argon2i_v16``; the ``src/test.c`` tags with
that file; and the keyed BLAKE2b digests with the BLAKE2 team's
``testvectors/blake2-kat.json`` (n = 127, 128, 129, 255) and with excerpts of
``blake2b-kat.txt`` quoted in Nettle's test suite (n = 0, 1, 255).

Conventions
-----------
* ``memory_cost`` is in KiB (= 1024-byte blocks) as given to Argon2 (``m``);
  implementations round it down to ``m' = 4 * p * floor(m / (4 * p))`` blocks.
* An empty ``secret`` / ``associated_data`` / ``key`` / ``salt`` / ``person``
  means the input is absent (length 0).  BLAKE2b ``salt`` and ``person`` are
  either empty or exactly 16 bytes.
* ``len(tag)`` / ``digest_size`` is the requested output length.
* Self-test vectors are kept cheap: every Argon2 self-test vector has
  ``memory_cost <= 64``, and every ``memory_cost`` here is ``<= 256`` because
  the test suite also runs under CPU emulation.
"""

from __future__ import annotations

from .argon2 import ARGON2_VECTORS, Argon2Vector
from .blake2b import BLAKE2B_TREE_VECTORS, BLAKE2B_VECTORS, Blake2bTreeVector, Blake2bVector

__all__ = ["ARGON2_VECTORS", "BLAKE2B_TREE_VECTORS", "BLAKE2B_VECTORS", "Argon2Vector",
           "Blake2bTreeVector", "Blake2bVector"]
