"""Argon2's known-answer vectors (provenance: :mod:`argonishche.vectors`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from .._named_tuple import NamedTuple


class Argon2Vector(NamedTuple):
    type: str              # "d", "i" or "id"
    version: int           # 0x10 or 0x13
    time_cost: int
    memory_cost: int       # KiB
    parallelism: int
    password: bytes
    salt: bytes
    secret: bytes
    associated_data: bytes
    tag: bytes             # expected tag; len(tag) is the tag length
    source: str
    selftest: bool


ARGON2_VECTORS: tuple[Argon2Vector, ...] = (
    # RFC 9106 Section 5.1: Argon2d v0x13, t=3, m=32 KiB, p=4
    Argon2Vector(type="d", version=0x13, time_cost=3, memory_cost=32, parallelism=4,
        selftest=True,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("512b391b6f1162975371d30919734294f868e3be3984f3c1a13a4db9fabe4acb"),
        source="RFC 9106 Section 5.1 (Argon2d test vector)"),
    # RFC 9106 Section 5.2: Argon2i v0x13, t=3, m=32 KiB, p=4
    Argon2Vector(type="i", version=0x13, time_cost=3, memory_cost=32, parallelism=4,
        selftest=True,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8"),
        source="RFC 9106 Section 5.2 (Argon2i test vector)"),
    # RFC 9106 Section 5.3: Argon2id v0x13, t=3, m=32 KiB, p=4
    Argon2Vector(type="id", version=0x13, time_cost=3, memory_cost=32, parallelism=4,
        selftest=True,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"),
        source="RFC 9106 Section 5.3 (Argon2id test vector)"),
    # Argon2d v0x10 with the RFC 9106 Section 5 inputs
    Argon2Vector(type="d", version=0x10, time_cost=3, memory_cost=32, parallelism=4,
        selftest=True,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("96a9d4e5a1734092c85e29f410a45914a5dd1f5cbf08b2670da68a0285abf32b"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2; equals the tag in phc-winner-argon2 kats/argon2d_v16")),
    # Argon2i v0x10 with the RFC 9106 Section 5 inputs
    Argon2Vector(type="i", version=0x10, time_cost=3, memory_cost=32, parallelism=4,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("87aeedd6517ab830cd9765cd8231abb2e647a5dee08f7c05e02fcb763335d0fd"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2; equals the tag in phc-winner-argon2 kats/argon2i_v16")),
    # Argon2id v0x10 with the RFC 9106 Section 5 inputs
    Argon2Vector(type="id", version=0x10, time_cost=3, memory_cost=32, parallelism=4,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("b64615f07789b66b645b67ee9ed3b377ae350b6bfcbb0fc95141ea8f322613c0"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # single lane at the minimum memory: p=1, m=8 KiB (= 8p), RFC inputs
    Argon2Vector(type="id", version=0x13, time_cost=3, memory_cost=8, parallelism=1,
        selftest=True,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("8836e05c2eeea49531b970099026f9e03a260cf7e27f34936715b590c4502ffc"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # p=3, m=29 KiB: not a multiple of 4p, so m" rounds down to 24 blocks; RFC inputs
    Argon2Vector(type="i", version=0x13, time_cost=3, memory_cost=29, parallelism=3,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("c370ece06ad4a31c565a9dd76aee4a96efb39be55c290e24736946dacfeb840d"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # v0x10 with p=3, m=29 KiB (m" = 24 blocks), t=2 (second pass overwrites); RFC inputs
    Argon2Vector(type="d", version=0x10, time_cost=2, memory_cost=29, parallelism=3,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("29bb2ed353ad53bdc90866e68f515e9c63b04afd69d049e989a7baf82868faed"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # single pass: t=1, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="d", version=0x13, time_cost=1, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("f6bb0177e4adc12b606e7d6522ae1d0d7b7404828954953cf73f8b0723bcc9c5"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # four passes: t=4, p=2, m=32 KiB; RFC inputs
    Argon2Vector(type="id", version=0x13, time_cost=4, memory_cost=32, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("b0d6daf1ec209bf76fbdab9569843510248cb0c467a75c4bcc378b57d85f668b"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # minimum tag length: t=2, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("17f19c82"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # tag just below 64 bytes: t=2, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex(
            "e3c3dc40683a0894331b8625e85cd0fc7c298b2f62aa8a4e13e921457d4d3f6d"
            "82cab0938d94c952dc28b3716c61b4ee1aaef12a0c9966ace30258097a8e0e"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # tag exactly 64 bytes (largest single-BLAKE2b H"): t=2, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex(
            "5572a895914b8ce64c9aff0cb2205e54836d071fd36d90e97a7f470e40db9eaf"
            "5788b0f48644d4cc8a9c7c3af4d58a47a49bef3fd8cefc80944279c5c4a5f435"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # tag just above 64 bytes (smallest chained H"): t=2, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="d", version=0x13, time_cost=2, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex(
            "9f00337ba27c26a790f87d1913b3f5c3db3a789b703e1f38cd39986c820b02c2"
            "3dc810f4f71899a508216441c08390cf4e6351c60a8aa9f78870215397d4bb51"
            "69"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # 100-byte tag (chained H"): t=2, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="i", version=0x13, time_cost=2, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex(
            "9adae8757bbb57e85020aaadd89eb3ae23823dcb9e1405655ce0fbb0dff9ac00"
            "a16125281d8d98dfdfe4e57aee6d8a047e3aa885cc0156aa2d4a105228e182aa"
            "aaba40fd001a8ec2bdf8a5a038fa2ab36a8452c0718e9d697865ff7a8512bd66"
            "ee3bdad4"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # 1025-byte tag (long chained H"): t=2, p=2, m=16 KiB; RFC inputs
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=16, parallelism=2,
        selftest=False,
        password=bytes.fromhex("01") * 32,
        salt=bytes.fromhex("02") * 16,
        secret=bytes.fromhex("03") * 8,
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex(
            "54ff7a695951032b3cfd36b58881596ebbf8a78da656ea13f623f38bb3966509"
            "019afdb94845b185927df07120db431a979f1f31961d5e32f78b378bd3020409"
            "2716fda331349a7aa8cfb306878b74f6440f2f67e46ea0fd546c78b7244d7a64"
            "4a7ab461a184234c5af15883da99f43a379941c1f5fdd05d425d0efa8c4f8e9b"
            "c4f4524dfb3e4942a65f8f8809a80aeb9b51be30803bb5899265219408a07621"
            "473276f073c41f3a78347663e3ea6f543d027ed4e61a10facca801155cbcc51c"
            "c66d7271dbc5c59651f0f2e137ec68554dbaa8b0691c540e612f9b54faf610f2"
            "73e89f9535416356a44fcc292208c95bef5c84f55d3b69d3db38e9430bea32b1"
            "739d0c29f3e3c85b9df8e172d6948111414404a9d2a947635bd90f051efa0336"
            "c77a0200eee44a68f118abba60022956a30632060e2d706553b858572dd59f95"
            "cb9ef5120b5bba0d69105ac105afe2053f024b6101b96369e9b01caf445cc7f8"
            "bc385d745a71c3e5386ad2df33488a500ed017dfb66e81805f80095bb9dbc3dd"
            "fdfcc76bb05a94cb86c75f5f5f0f6dae597f61d9603091f5784048370b688e75"
            "1fd19083262c05ec08e08410a3747b75a8b9acfbd0b945b7577f8722f83cbe38"
            "abb3b814ab40dfb4b2c911da5a8703eac4f8646401c035d5376845b09b313305"
            "f5e8402a547e56122337028df1076e8641921a0ecf47fd6a6b35f3e7475b49bf"
            "713297c99564bf8f71b40f77ce16ef435ca77285e26189319be959fd46d1e509"
            "14fb3c681e3c435d3b9cff1e67894461e2b2ec05db2a82df0568ee46fa038bd5"
            "12bf8f793eb6b67fed8baf463ad8ff8d00c260cbae32b38993afd33e6f10b98f"
            "7176565fc805060f9a6de6beaddb6747568ae15ad224f165178e90242e896ca2"
            "e1e2d21dd7fc55ab64d3578ddeffe96c82f0bd19567b651f1d6afd178f3a5ef0"
            "3b96b3f953befadcd5a47db4e877562c274f6658cd3b46617cdeb29334fcbc16"
            "1792e06eed84818501449fb16b1d73273be80f9566abeb9eb9f83d918cca5ab3"
            "27e07031202c9a051b61a69ef466cdbd7c59587ec767d3a8853393e920b37258"
            "f460a6114a8408975a08768e2ea7a701abf7e125270ceabc6a6bc8ed9fb177eb"
            "730ed7a816b94ee7ad1cf5034f4108a23e09de8016d3fc01b76910cd50935d06"
            "c38c7bf46ca2f6568daf3682fd4e1154465e438aaddbeba93c163d613938e1d6"
            "6531e4aa7099c639d8f5ae5869953f0c5a742ba395af22fd2aca91ec9450ac9a"
            "b1ef31b8bdff4dacef639f4ad7a188577a471c146a8f8c341081d2f467e736fd"
            "dbd5aa731e262c5a1c4075d8f6914e2ae2b53d76a9cd05d8fcc4ec2073ecdb56"
            "9be438e2a0c30f1b9671ad5bb92171add1a5d6eff20c15772c48f774f82e8ba1"
            "299d70aec9f3924e2916d626ced2116c70709cba8066e0d9da8ab25739039b9f"
            "53"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # empty password, minimum-length salt "somesalt", no secret / associated data
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=16, parallelism=1,
        selftest=False,
        password=b"",
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("fbb7d56958902f62969a5b823dec8580feaf4aba7da377384d7a80bf01771833"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # UTF-8 password "pässword".encode("utf-8"), salt "somesalt", no secret / ad
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=64, parallelism=2,
        selftest=False,
        password=bytes.fromhex("70c3a47373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("d3c918183f08a086eb214cd7c58bd45cd87a804c9cca90c231f8ad02cc413723"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # secret key only (no associated data): t=1, p=1, m=8 KiB
    Argon2Vector(type="id", version=0x13, time_cost=1, memory_cost=8, parallelism=1,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=bytes.fromhex("03") * 8,
        associated_data=b"",
        tag=bytes.fromhex("4a0cd13666e2e60ce2da3d4d19f1329da084b1f2d52ca662e30d25354bef6209"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # associated data only (no secret): t=1, p=1, m=8 KiB
    Argon2Vector(type="id", version=0x13, time_cost=1, memory_cost=8, parallelism=1,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=bytes.fromhex("04") * 12,
        tag=bytes.fromhex("e584900e2c8c36a993c2f8e03cde82653d40016b75f09016fb6a06fbcf97be34"),
        source=("computed with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0) / "
            "phc-winner-argon2")),
    # phc-winner-argon2 src/test.c: Argon2i v0x10, t=2, m=2^8 KiB, p=1, "password" / "somesalt"
    Argon2Vector(type="i", version=0x10, time_cost=2, memory_cost=256, parallelism=1,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("fd4dd83d762c49bdeaf57c47bdcd0c2f1babf863fdeb490df63ede9975fccf06"),
        source=("phc-winner-argon2 src/test.c (hashtest v0x10, t=2, m=1<<8, p=1); reproduced "
            "with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0)")),
    # phc-winner-argon2 src/test.c: Argon2i v0x10, t=2, m=2^8 KiB, p=2, "password" / "somesalt"
    Argon2Vector(type="i", version=0x10, time_cost=2, memory_cost=256, parallelism=2,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("b6c11560a6a9d61eac706b79a2f97d68b4463aa3ad87e00c07e2b01e90c564fb"),
        source=("phc-winner-argon2 src/test.c (hashtest v0x10, t=2, m=1<<8, p=2); reproduced "
            "with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0)")),
    # phc-winner-argon2 src/test.c: Argon2i v0x13, t=2, m=2^8 KiB, p=1, "password" / "somesalt"
    Argon2Vector(type="i", version=0x13, time_cost=2, memory_cost=256, parallelism=1,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("89e9029f4637b295beb027056a7336c414fadd43f6b208645281cb214a56452f"),
        source=("phc-winner-argon2 src/test.c (hashtest v0x13, t=2, m=1<<8, p=1); reproduced "
            "with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0)")),
    # phc-winner-argon2 src/test.c: Argon2i v0x13, t=2, m=2^8 KiB, p=2, "password" / "somesalt"
    Argon2Vector(type="i", version=0x13, time_cost=2, memory_cost=256, parallelism=2,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("4ff5ce2769a1d7f4c8a491df09d41a9fbe90e5eb02155a13e4c01e20cd4eab61"),
        source=("phc-winner-argon2 src/test.c (hashtest v0x13, t=2, m=1<<8, p=2); reproduced "
            "with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0)")),
    # phc-winner-argon2 src/test.c: Argon2id v0x13, t=2, m=2^8 KiB, p=1, "password" / "somesalt"
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=256, parallelism=1,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("9dfeb910e80bad0311fee20f9c0e2b12c17987b4cac90c2ef54d5b3021c68bfe"),
        source=("phc-winner-argon2 src/test.c (hashtest v0x13, t=2, m=1<<8, p=1); reproduced "
            "with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0)")),
    # phc-winner-argon2 src/test.c: Argon2id v0x13, t=2, m=2^8 KiB, p=2, "password" / "somesalt"
    Argon2Vector(type="id", version=0x13, time_cost=2, memory_cost=256, parallelism=2,
        selftest=False,
        password=bytes.fromhex("70617373776f7264"),
        salt=bytes.fromhex("736f6d6573616c74"),
        secret=b"",
        associated_data=b"",
        tag=bytes.fromhex("6d093c501fd5999645e0ea3bf620d7b8be7fd2db59c20d9fff9539da2bf57037"),
        source=("phc-winner-argon2 src/test.c (hashtest v0x13, t=2, m=1<<8, p=2); reproduced "
            "with argon2-cffi 25.1.0 (argon2-cffi-bindings 26.2.0)")),
)
