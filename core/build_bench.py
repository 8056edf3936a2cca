"""cffi build script for argonishche._bench._clock: the benchmark's core-clock estimate.

Kept out of argonishche._core, which holds only what hashing needs.  Run by setuptools (see
setup.py's cffi_modules) from the project root.
"""

import importlib.util
import os

from cffi import FFI

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))

# argonishche.build, by path: argonishche is not installed yet.
_spec = importlib.util.spec_from_file_location("argonishche_build",
                                               os.path.join(HERE, "argonishche", "build.py"))
_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_build)

ffibuilder = FFI()
ffibuilder.cdef("uint64_t argonishche_dependent_adds(uint64_t rounds);")
ffibuilder.set_source(
    "argonishche._bench._clock",
    "#include <stdint.h>\nuint64_t argonishche_dependent_adds(uint64_t rounds);",
    sources=[os.path.join(HERE, "csrc", "bench", "clock.c")],
    # Optimisation only: importing must be safe on any x86-64 CPU.
    extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra"],
    # It calls nothing in libc either: without it auditwheel cannot tell the wheel's libc.
    extra_link_args=_build.libc_link_args(),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
