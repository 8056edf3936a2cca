"""cffi build script for argonishche._bench._clock: the benchmark's core-clock estimate.

Kept out of argonishche._core, which holds only what hashing needs.  Run by setuptools (see
setup.py's cffi_modules) from the project root.
"""

import os

from cffi import FFI

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))

ffibuilder = FFI()
ffibuilder.cdef("uint64_t argonishche_dependent_adds(uint64_t rounds);")
ffibuilder.set_source(
    "argonishche._bench._clock",
    "#include <stdint.h>\nuint64_t argonishche_dependent_adds(uint64_t rounds);",
    sources=[os.path.join(HERE, "csrc", "bench", "clock.c")],
    # Optimisation only: importing must be safe on any x86-64 CPU.
    extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
