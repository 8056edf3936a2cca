"""argonishche.blake2b's tree-hashing parameters and the rest of hashlib.blake2b's surface.

hashlib.blake2b (CPython's own BLAKE2 code) is the independent implementation everything here is
compared with: the same arguments must give the same digest, or an exception of the same type
(ours is also a ParameterError).  The BLAKE2bp-style tree is also checked against the BLAKE2
team's own BLAKE2bp known answers.  tools/cpython_hashlib runs CPython's test_hashlib itself.
"""

from __future__ import annotations

import array
import copy
import hashlib
import io
import pickle

import argonishche
import pytest
from argonishche import ParameterError, ParameterTypeError, _registry, blake2b
from argonishche._core import ffi, lib
from argonishche.exceptions import ParameterOverflowError


class Index:
    """An int-like object (``__index__``), like numpy's integers."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"Index({self.value})"


class Untruthful:
    def __bool__(self) -> bool:
        raise ZeroDivisionError("no truth value")

    def __repr__(self) -> str:
        return "Untruthful()"


# ---- every parameter, accepted and refused as hashlib does ----------------------------------

INT_MIN, INT_MAX = -2**31, 2**31 - 1

#: (parameter, values): each is given alone (on b"abc") to hashlib and to argonishche.
VALUES = {
    "digest_size": [1, 20, 64, 0, 65, -1, INT_MAX, INT_MAX + 1, INT_MIN, INT_MIN - 1, 2**64,
                    1.0, "1", None, Index(7)],
    "fanout": [0, 1, 2, 255, 256, -1, INT_MAX + 1, INT_MIN - 1, 2**64, 1.0, "1", None,
               Index(4)],
    "depth": [1, 2, 255, 0, 256, -1, INT_MAX + 1, 1.5, None, Index(2)],
    "leaf_size": [0, 1, 4096, 2**32 - 1, 2**32, 2**64, -1, -2**70, 1.0, "1", None, Index(3)],
    "node_offset": [0, 1, 2**32, 2**64 - 1, 2**64, 2**100, -1, -2**70, 1.0, None, Index(3)],
    "node_depth": [0, 1, 255, 256, -1, INT_MAX + 1, 1.0, None, Index(1)],
    "inner_size": [0, 1, 32, 64, 65, -1, INT_MAX + 1, 1.0, None, Index(64)],
    "last_node": [True, False, 0, 1, 2, "x", "", None, [], [0], Untruthful()],
    "usedforsecurity": [True, False, 0, "x", None, Untruthful()],
    "key": [b"", b"k", b"k" * 64, b"k" * 65, bytearray(b"k" * 3), memoryview(b"key"), "key",
            None, 1],
    "salt": [b"", b"s" * 16, b"s" * 17, "salt", None],
    "person": [b"", b"p" * 16, b"p" * 17, "person", None],
}
CASES = [pytest.param(name, value, id=f"{name}={value!r}"[:60])
         for name, values in VALUES.items() for value in values]


def outcome(constructor, **kwargs):
    try:
        return "digest", constructor(b"abc", **kwargs).hexdigest()
    except Exception as exc:  # noqa: BLE001 - compared with hashlib's
        return "error", exc


@pytest.mark.parametrize("name, value", CASES)
def test_each_parameter_is_accepted_or_refused_as_hashlib_does(name, value):
    theirs = outcome(hashlib.blake2b, **{name: value})
    ours = outcome(blake2b, **{name: value})
    if theirs[0] == "digest":
        assert ours == theirs
        return
    assert ours[0] == "error", f"hashlib raised {theirs[1]!r}, argonishche gave {ours[1]}"
    expected = type(theirs[1])
    assert isinstance(ours[1], expected), f"{ours[1]!r} is not a {expected.__name__}"
    if expected in (ValueError, TypeError, OverflowError):
        # Ours also says which parameter and what is allowed.
        assert isinstance(ours[1], ParameterError) and name in str(ours[1]), repr(ours[1])
    if expected is OverflowError:
        assert type(ours[1]) is ParameterOverflowError


@pytest.mark.parametrize("name", ["digest_size", "fanout", "depth", "leaf_size", "node_offset",
                                  "node_depth", "inner_size"])
def test_a_bool_for_an_integer_is_a_type_error(name):
    # The one deliberate difference in what is accepted: hashlib reads True as 1.
    hashlib.blake2b(**{name: True})
    with pytest.raises(ParameterTypeError, match=name):
        blake2b(**{name: True})


def test_the_ranges_ends_hash_as_hashlib_does(backend):
    ends = dict(fanout=0, depth=255, leaf_size=2**32 - 1, node_offset=2**64 - 1,
                node_depth=255, inner_size=64, last_node=True)
    data = bytes(range(256)) * 3
    for digest_size in (1, 32, 64):
        for key in (b"", bytes(range(64))):
            params = dict(ends, digest_size=digest_size, key=key, salt=b"s" * 16,
                          person=b"p" * 16)
            assert (blake2b(data, backend=backend, **params).digest()
                    == hashlib.blake2b(data, **params).digest()), params


@pytest.mark.parametrize("size", [0, 1, 127, 128, 129, 255, 256, 257, 1000, 5000])
@pytest.mark.parametrize("last_node", [False, True])
def test_last_node_sets_f1_on_the_final_block_only(backend, size, last_node):
    data = bytes(range(256)) * 20
    ours = blake2b(backend=backend, last_node=last_node)
    for start in range(0, size, 100):  # in pieces: the final block waits in the buffer
        ours.update(data[start:min(size, start + 100)])
    assert ours.digest() == hashlib.blake2b(data[:size], last_node=last_node).digest()
    if last_node:
        assert ours.digest() != hashlib.blake2b(data[:size]).digest()


def test_each_field_lands_in_its_own_bytes_of_the_parameter_block():
    # A digest differs from the sequential one for each field set alone, and two fields never
    # give the same digest: no field overwrites or aliases another.
    fields = dict(fanout=2, depth=3, leaf_size=4, node_offset=5, node_depth=6, inner_size=7,
                  last_node=True)
    digests = {blake2b(b"x").digest()}
    for name, value in fields.items():
        ours = blake2b(b"x", **{name: value}).digest()
        assert ours == hashlib.blake2b(b"x", **{name: value}).digest()
        digests.add(ours)
    assert len(digests) == 1 + len(fields)


# ---- a BLAKE2bp-style tree: 4 leaves, fanout 4, depth 2 -------------------------------------

#: BLAKE2bp (unkeyed, 64-byte digest) of the bytes 00 01 .. (n-1): the "blake2bp" entries of
#: testvectors/blake2-kat.json in https://github.com/BLAKE2/BLAKE2 (commit ed1974ea8343), the
#: BLAKE2 team's reference, independent of hashlib and of this project.
BLAKE2BP_KAT = {
    0: "b5ef811a8038f70b628fa8b294daae7492b1ebe343a80eaabbf1f6ae664dd67b"
       "9d90b0120791eab81dc96985f28849f6a305186a85501b405114bfa678df9380",
    1: "a139280e72757b723e6473d5be59f36e9d50fc5cd7d4585cbc09804895a36c52"
       "1242fb2789f85cb9e35491f31d4a6952f9d8e097aef94fa1ca0b12525721f03d",
    63: "0425caaa923b47b35045eb50829c048bc890444afeefc0afc9d1877b821e043c"
        "9c7b9d6dc33fbbdfa537c1ece311965b2fee8982bc46a2a750bfc71d79dbea04",
    64: "6b9d86f15c090a00fc3d907f906c5eb79265e58b88eb64294b4cc4e2b89b1a7c"
        "5ee3127ed21b456862de6b2abda59eaacf2dcbe922ca755e40735be81d9c88a5",
    127: "ea64b003a135766121cfbccbdc08dca2402926be78cea3d0a7253d9ec9e63b8a"
         "cdd994559917e0e03b5e155f944d7198d99245a794ce19c9b4df4da4a3399334",
    128: "05ad0f271faf7e361320518452813ff9fb9976ac378050b6eefb05f7867b577b"
         "8f14475794cff61b2bc062d346a7c65c6e0067c60a374af7940f10aa449d5fb9",
    129: "b545880294afa153f8b9f49c73d952b5d1228f1a1ab5ebcb05ff79e560c030f7"
         "500fe256a40b6a0e6cb3d42acd4b98595c5b51eaec5ad69cd40f1fc16d2d5f50",
    255: "3f35c45d24fcfb4acca651076c08000e279ebbff37a1333ce19fd577202dbd24"
         "b58c514e36dd9ba64af4d78eea4e2dd13bc18d798887dd971376bcae0087e17e",
}
LEAVES = 4


def blake2bp(data: bytes, constructor, digest_size: int = 64) -> bytes:
    """BLAKE2bp's tree with *constructor* (hashlib.blake2b's signature): leaf i hashes the
    128-byte blocks i, i + 4, i + 8, ... of *data* (node offset i, the last leaf flagged as the
    last node); the root hashes the four leaf digests (node depth 1, last node)."""
    tree = dict(fanout=LEAVES, depth=2, leaf_size=0, inner_size=64)
    leaves = []
    for i in range(LEAVES):
        leaf = constructor(digest_size=64, node_offset=i, node_depth=0,
                           last_node=i == LEAVES - 1, **tree)
        for start in range(128 * i, len(data), 128 * LEAVES):
            leaf.update(data[start:start + 128])
        leaves.append(leaf.digest())
    root = constructor(b"".join(leaves), digest_size=digest_size, node_offset=0, node_depth=1,
                       last_node=True, **tree)
    return root.digest()


@pytest.mark.parametrize("n", sorted(BLAKE2BP_KAT))
def test_the_tree_is_blake2bp_by_the_reference_known_answers(backend, n):
    def ours(*args, **kwargs):
        return blake2b(*args, backend=backend, **kwargs)

    assert blake2bp(bytes(range(n)), ours).hex() == BLAKE2BP_KAT[n]
    assert blake2bp(bytes(range(n)), hashlib.blake2b).hex() == BLAKE2BP_KAT[n]  # the recipe


@pytest.mark.parametrize("size", [0, 1, 511, 512, 513, 4096 + 7, 100_000])
def test_the_tree_matches_hashlib(backend, size):
    def ours(*args, **kwargs):
        return blake2b(*args, backend=backend, **kwargs)

    data = (bytes(range(251)) * (size // 251 + 1))[:size]
    for digest_size in (64, 32):
        assert blake2bp(data, ours, digest_size) == blake2bp(data, hashlib.blake2b, digest_size)


def test_a_tree_with_any_leaf_wrong_differs():
    # The check can fail: the same tree with one leaf's node offset or last-node flag wrong.
    data = bytes(range(256)) * 8
    right = blake2bp(data, blake2b)

    def wrong_offset(*args, **kwargs):
        if kwargs.get("node_offset") == 2:
            kwargs["node_offset"] = 1
        return blake2b(*args, **kwargs)

    def no_last_leaf(*args, **kwargs):
        if kwargs.get("node_depth") == 0:
            kwargs["last_node"] = False
        return blake2b(*args, **kwargs)

    assert blake2bp(data, wrong_offset) != right
    assert blake2bp(data, no_last_leaf) != right


# ---- the object -----------------------------------------------------------------------------

TREE = dict(digest_size=40, key=b"key", salt=b"salt", person=b"me", fanout=4, depth=2,
            leaf_size=4096, node_offset=3, node_depth=1, inner_size=64, last_node=True)


def test_copy_keeps_the_tree_parameters():
    ours, theirs = blake2b(b"abc" * 100, **TREE), hashlib.blake2b(b"abc" * 100, **TREE)
    for clone in (ours.copy(), copy.copy(ours)):
        clone.update(b"more")
        expected = theirs.copy()
        expected.update(b"more")
        assert clone.digest() == expected.digest()
    assert ours.digest() == theirs.digest()
    assert ours.digest_size == theirs.digest_size == 40


def test_attributes_are_hashlibs():
    ours, theirs = blake2b(**TREE), hashlib.blake2b(**TREE)
    for name in ("name", "digest_size", "block_size"):
        assert getattr(ours, name) == getattr(theirs, name), name
    for name in ("SALT_SIZE", "PERSON_SIZE", "MAX_KEY_SIZE", "MAX_DIGEST_SIZE"):
        assert getattr(blake2b, name) == getattr(hashlib.blake2b, name), name


def test_the_type_is_immutable_as_hashlibs():
    for cls in (blake2b, hashlib.blake2b):
        with pytest.raises(TypeError, match="immutable type"):
            cls.value = False
        with pytest.raises(TypeError, match="immutable type"):
            cls.block_size = 64
    assert blake2b.block_size == 128


@pytest.mark.parametrize("make", [
    bytes, bytearray, memoryview,
    lambda b: array.array("b", b), lambda b: array.array("Q", b.ljust(8 * -(-len(b) // 8), b"\0")),
    lambda b: memoryview(b).cast("B", (len(b),))], ids=["bytes", "bytearray", "memoryview",
                                                       "array-b", "array-Q", "cast"])
def test_update_takes_any_buffer(make):
    data = make(bytes(range(200)))
    ours, theirs = blake2b(**TREE), hashlib.blake2b(**TREE)
    ours.update(data)
    theirs.update(data)
    assert ours.digest() == theirs.digest()
    assert blake2b(data, **TREE).digest() == hashlib.blake2b(data, **TREE).digest()


@pytest.mark.parametrize("data", ["text", None, 1, memoryview(bytes(8))[::2]],
                         ids=["str", "None", "int", "non-contiguous"])
def test_update_refuses_what_hashlib_refuses(data):
    with pytest.raises(Exception) as theirs:
        hashlib.blake2b().update(data)
    with pytest.raises(type(theirs.value)):
        blake2b().update(data)
    with pytest.raises(type(theirs.value)):
        blake2b(data)


@pytest.mark.parametrize("size", [0, 1, 2**18 + 5])
def test_file_digest_works(tmp_path, size):
    data = (bytes(range(256)) * (size // 256 + 1))[:size]
    path = tmp_path / "data"
    path.write_bytes(data)
    with open(path, "rb") as f:
        ours = hashlib.file_digest(f, argonishche.blake2b)
    assert type(ours) is blake2b and ours.digest() == hashlib.blake2b(data).digest()
    ours = hashlib.file_digest(io.BytesIO(data), lambda: blake2b(**TREE))
    assert ours.digest() == hashlib.blake2b(data, **TREE).digest()


def test_pickling_is_unchanged_and_refused_with_tree_parameters():
    plain = blake2b(b"abc", digest_size=20)
    again = pickle.loads(pickle.dumps(plain))
    assert (again.digest_size, again.digest()) == (20, plain.digest())
    for params in (dict(last_node=True), dict(fanout=4), dict(node_offset=0), TREE):
        with pytest.raises(TypeError, match="cannot pickle"):
            pickle.dumps(blake2b(b"abc", **params))


# ---- the kernel ABI -------------------------------------------------------------------------


def test_the_kernel_abi_is_3_with_f1_in_the_compression_function(backend):
    assert lib.ARGONISHCHE_KERNEL_ABI == argonishche.KERNEL_ABI == 3
    compress = ffi.typeof("argonishche_blake2b_compress_fn")
    assert [str(arg.cname) for arg in compress.args][-2:] == ["uint64_t", "uint64_t"]
    assert len(compress.args) == 7
    table = _registry.get().kernel_table("blake2b", backend)
    assert table.abi_version == 3


def test_the_kernels_f1_word_is_v15(backend):
    # F of one zero block from h = IV ^ the sequential parameter block, with f0 and f1 set and
    # increment 0, is BLAKE2b-512 of b"" as the last node: hashlib's answer.
    table = _registry.get().kernel_table("blake2b", backend)
    iv = [0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
          0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179]
    for f1, last_node in ((0, False), (2**64 - 1, True)):
        h = ffi.new("uint64_t[8]", [iv[0] ^ 0x01010040] + iv[1:])
        t = ffi.new("uint64_t[2]", [0, 0])
        table.blake2b_compress(h, t, ffi.new("uint8_t[128]"), 1, 0, 2**64 - 1, f1)
        digest = b"".join(int(word).to_bytes(8, "little") for word in h)
        assert digest == hashlib.blake2b(b"", last_node=last_node).digest()
