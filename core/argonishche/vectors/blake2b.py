"""BLAKE2b's known-answer vectors (provenance: :mod:`argonishche.vectors`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from .._named_tuple import NamedTuple


class Blake2bVector(NamedTuple):
    data: bytes
    digest_size: int
    key: bytes
    salt: bytes
    person: bytes
    digest: bytes          # expected output
    source: str            # provenance, e.g. "RFC 7693 Appendix A"
    selftest: bool         # True: part of the quick start-up self-test


class Blake2bTreeVector(NamedTuple):
    """BLAKE2b with the tree-hashing parameters (hashlib.blake2b's names and ranges)."""

    data: bytes
    digest_size: int
    key: bytes
    salt: bytes
    person: bytes
    fanout: int
    depth: int
    leaf_size: int
    node_offset: int
    node_depth: int
    inner_size: int
    last_node: bool        # True: the final block is compressed with f1 set
    digest: bytes
    source: str
    selftest: bool


BLAKE2B_VECTORS: tuple[Blake2bVector, ...] = (
    # RFC 7693 Appendix A: BLAKE2b-512("abc")
    Blake2bVector(digest_size=64, selftest=True,
        data=bytes.fromhex("616263"),
        key=b"",
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"),
        source="RFC 7693 Appendix A"),
    # keyed KAT, key 00..3f, empty message
    Blake2bVector(digest_size=64, selftest=False,
        data=b"",
        key=bytes(range(64)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
            "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"),
        source=("BLAKE2 reference keyed KAT (key 00..3f, message 00..n-1), reproduced with "
            "CPython 3.11.7 hashlib.blake2b")),
    # keyed KAT, key 00..3f, message 00 (1 byte)
    Blake2bVector(digest_size=64, selftest=False,
        data=bytes(range(1)),
        key=bytes(range(64)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4"
            "187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd"),
        source=("BLAKE2 reference keyed KAT (key 00..3f, message 00..n-1), reproduced with "
            "CPython 3.11.7 hashlib.blake2b")),
    # keyed KAT, key 00..3f, message 00..7e (127 bytes)
    Blake2bVector(digest_size=64, selftest=False,
        data=bytes(range(127)),
        key=bytes(range(64)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "76d2d819c92bce55fa8e092ab1bf9b9eab237a25267986cacf2b8ee14d214d73"
            "0dc9a5aa2d7b596e86a1fd8fa0804c77402d2fcd45083688b218b1cdfa0dcbcb"),
        source=("BLAKE2 reference keyed KAT (key 00..3f, message 00..n-1), reproduced with "
            "CPython 3.11.7 hashlib.blake2b")),
    # keyed KAT, key 00..3f, message 00..7f (128 bytes)
    Blake2bVector(digest_size=64, selftest=False,
        data=bytes(range(128)),
        key=bytes(range(64)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "72065ee4dd91c2d8509fa1fc28a37c7fc9fa7d5b3f8ad3d0d7a25626b57b1b44"
            "788d4caf806290425f9890a3a2a35a905ab4b37acfd0da6e4517b2525c9651e4"),
        source=("BLAKE2 reference keyed KAT (key 00..3f, message 00..n-1), reproduced with "
            "CPython 3.11.7 hashlib.blake2b")),
    # keyed KAT, key 00..3f, message 00..80 (129 bytes)
    Blake2bVector(digest_size=64, selftest=True,
        data=bytes(range(129)),
        key=bytes(range(64)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "64475dfe7600d7171bea0b394e27c9b00d8e74dd1e416a79473682ad3dfdbb70"
            "6631558055cfc8a40e07bd015a4540dcdea15883cbbf31412df1de1cd4152b91"),
        source=("BLAKE2 reference keyed KAT (key 00..3f, message 00..n-1), reproduced with "
            "CPython 3.11.7 hashlib.blake2b")),
    # keyed KAT, key 00..3f, message 00..fe (255 bytes)
    Blake2bVector(digest_size=64, selftest=False,
        data=bytes(range(255)),
        key=bytes(range(64)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e9248"
            "4be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461"),
        source=("BLAKE2 reference keyed KAT (key 00..3f, message 00..n-1), reproduced with "
            "CPython 3.11.7 hashlib.blake2b")),
    # unkeyed BLAKE2b-512 of the empty message
    Blake2bVector(digest_size=64, selftest=False,
        data=b"",
        key=b"",
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
            "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # salt + personalization, 32-byte digest, unkeyed
    Blake2bVector(digest_size=32, selftest=False,
        data=bytes.fromhex(
            "54686520717569636b2062726f776e20666f78206a756d7073206f7665722074"
            "6865206c617a7920646f67"),
        key=b"",
        salt=bytes.fromhex("101112131415161718191a1b1c1d1e1f"),
        person=bytes.fromhex("6172676f6e6973686368652d74657374"),
        digest=bytes.fromhex("a50465bd4c6eca6b94f370213a8838586d7223637c4caa48839575a4ddc20cb4"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # key + salt + personalization, 64-byte digest, 200-byte message (2 blocks)
    Blake2bVector(digest_size=64, selftest=False,
        data=bytes.fromhex(
            "030a11181f262d343b424950575e656c737a81888f969da4abb2b9c0c7ced5dc"
            "e3eaf1f8ff060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bc"
            "c3cad1d8dfe6edf4fb020910171e252c333a41484f565d646b727980878e959c"
            "a3aab1b8bfc6cdd4dbe2e9f0f7fe050c131a21282f363d444b525960676e757c"
            "838a91989fa6adb4bbc2c9d0d7dee5ecf3fa01080f161d242b323940474e555c"
            "636a71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6fd040b121920272e353c"
            "434a51585f666d74"),
        key=bytes.fromhex("404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"),
        salt=bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"),
        person=bytes.fromhex("0000000000000000706572736f6e616c"),
        digest=bytes.fromhex(
            "b8f74a16976a19f5c2e4ad28d36d6e5088778a0c835a762cb5d11c53d7f4a17d"
            "00a1a0dca94e1ac8c02ffeb79505019359412f5bb0eafbe903e998fd27ff6c50"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # 1-byte digest (minimum), unkeyed
    Blake2bVector(digest_size=1, selftest=False,
        data=bytes.fromhex("616263"),
        key=b"",
        salt=b"",
        person=b"",
        digest=bytes.fromhex("6b"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # 20-byte digest, unkeyed, 200-byte message
    Blake2bVector(digest_size=20, selftest=False,
        data=bytes(range(200)),
        key=b"",
        salt=b"",
        person=b"",
        digest=bytes.fromhex("b83a5733ce63f2dd8266ea8ec93333d7935142cf"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # 33-byte digest, keyed with 33-byte key 00..20, 128-byte message (1 full block)
    Blake2bVector(digest_size=33, selftest=False,
        data=bytes(range(128)),
        key=bytes(range(33)),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "868306a30a23f0558caf7ab9720ec4081055c02b0bd67fdadf8a3bea619e15e9"
            "d6"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # 48-byte digest, keyed with 1-byte key, 256-byte message (2 full blocks)
    Blake2bVector(digest_size=48, selftest=False,
        data=bytes.fromhex(
            "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0"
            "dfdedddcdbdad9d8d7d6d5d4d3d2d1d0cfcecdcccbcac9c8c7c6c5c4c3c2c1c0"
            "bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0afaeadacabaaa9a8a7a6a5a4a3a2a1a0"
            "9f9e9d9c9b9a999897969594939291908f8e8d8c8b8a89888786858483828180"
            "7f7e7d7c7b7a797877767574737271706f6e6d6c6b6a69686766656463626160"
            "5f5e5d5c5b5a595857565554535251504f4e4d4c4b4a49484746454443424140"
            "3f3e3d3c3b3a393837363534333231302f2e2d2c2b2a29282726252423222120"
            "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"),
        key=bytes.fromhex("2a"),
        salt=b"",
        person=b"",
        digest=bytes.fromhex(
            "7fefae2d7072375b42f94e59cc22e7f54d522964e9f5e2ce5aec4f904c710fc4"
            "f1f09b1a46b8cdb45e7f7fd47a33257f"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
)


BLAKE2B_TREE_VECTORS: tuple[Blake2bTreeVector, ...] = (
    # last_node alone: f1 on the only (empty) block of a sequential hash
    Blake2bTreeVector(digest_size=64, selftest=True,
        data=b"",
        key=b"",
        salt=b"",
        person=b"",
        fanout=1,
        depth=1,
        leaf_size=0,
        node_offset=0,
        node_depth=0,
        inner_size=0,
        last_node=True,
        digest=bytes.fromhex(
            "05cc8cc53183c6fb48571cf02ad1984d562bdff1ef31e3db83725fe4a71b276a"
            "3e1206e2904286ceb87f292bca618fff58ee2cb65399d3e197dff83a45602d99"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # a BLAKE2bp-style last leaf (fanout 4, depth 2, inner 64, offset 3, last node), 300 bytes:
    # f1 on the final block after two full ones
    Blake2bTreeVector(digest_size=64, selftest=True,
        data=bytes(range(256)) + bytes(range(44)),
        key=b"",
        salt=b"",
        person=b"",
        fanout=4,
        depth=2,
        leaf_size=0,
        node_offset=3,
        node_depth=0,
        inner_size=64,
        last_node=True,
        digest=bytes.fromhex(
            "804ec38eb0294aeea5d66faf29a560bb31d96f6916b7f5d63ee82eb6014297fb"
            "f71b8ed12c2b70140972f4918f3ee6de9c824067dea71940e4ba04875cad02c7"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # every tree field at the top of its range (fanout 0: unlimited), keyed, 129 bytes
    Blake2bTreeVector(digest_size=32, selftest=True,
        data=bytes(range(129)),
        key=bytes(range(32)),
        salt=b"",
        person=b"",
        fanout=0,
        depth=255,
        leaf_size=4294967295,
        node_offset=18446744073709551615,
        node_depth=255,
        inner_size=64,
        last_node=False,
        digest=bytes.fromhex("bea5d8bcccfcaf38fb0afa243b2c555d2c89fbd2e6472b9e875e3dc2f2f3a7de"),
        source="computed with CPython 3.11.7 hashlib.blake2b"),
    # CPython's test_case_blake2b_all_parameters (every parameter, last node)
    Blake2bTreeVector(digest_size=16, selftest=False,
        data=bytes.fromhex("666f6f"),
        key=bytes.fromhex("626172"),
        salt=bytes.fromhex("62617a"),
        person=bytes.fromhex("62696e67"),
        fanout=2,
        depth=3,
        leaf_size=4,
        node_offset=5,
        node_depth=6,
        inner_size=7,
        last_node=True,
        digest=bytes.fromhex("920568b0c5873b2f0ab67bedb6cf1b2b"),
        source="CPython 3.11 Lib/test/test_hashlib.py test_case_blake2b_all_parameters"),
)
