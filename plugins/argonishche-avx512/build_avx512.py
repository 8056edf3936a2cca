"""cffi build script for argonishche_avx512._kernels, made by argonishche's own helper.

The helper declares the two names the core reads (argonishche_kernels and the ABI number), adds
the kernel contract's include directory and compiles with -O3 and no -m flags: the instruction
set is enabled inside src/avx512.c, on the kernels only.
"""

from argonishche.build import backend_ffibuilder

ffibuilder = backend_ffibuilder("argonishche_avx512._kernels", ["src/avx512.c"])

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
