"""argonishche-avx512: the ``avx512`` kernel backend for argonishche, as a separate plugin wheel.

argonishche finds this module through the ``argonishche`` entry point in pyproject.toml and calls
the hook below once, at start-up.  Importing it imports no compiled code: the registry imports
``argonishche_avx512._kernels`` only after its CPU gate has seen every feature listed here.
"""

import argonishche

__version__ = "0.1.0"

BACKEND = argonishche.Backend(
    name="avx512",
    description="AVX-512 F+VL: Argon2 G on 512-bit vectors in registers, BLAKE2b F on 256-bit rows",
    kernel_module="argonishche_avx512._kernels",
    # What the compiled kernels contain: EVEX instructions of AVX-512 F (zmm) and VL (EVEX ymm,
    # e.g. vprorq ymm), and the VEX-encoded AVX/AVX2 forms GCC picks where EVEX is not needed.
    cpu_features={"avx", "avx2", "avx512f", "avx512vl"},
    priority=50,
)


@argonishche.hookimpl
def argonishche_register_backends(register):
    register(BACKEND)
