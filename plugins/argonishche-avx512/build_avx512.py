"""cffi build script for argonishche_avx512._kernels, made by argonishche's own helper.

The helper declares the two names the core reads (argonishche_kernels and the ABI number), adds
the kernel contract's include directory and compiles with -O3 and no -m flags: the kernels in
src/avx512.c are compiled for exactly the descriptor's cpu_features, and the module records that
target so the registry can check the two agree.
"""

import importlib.util
import os

from argonishche.build import backend_ffibuilder

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))

# The descriptor, from the package being built (not installed yet, and maybe not on sys.path).
_spec = importlib.util.spec_from_file_location(
    "argonishche_avx512_descriptor", os.path.join(HERE, "argonishche_avx512", "__init__.py"))
_plugin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_plugin)

ffibuilder = backend_ffibuilder(_plugin.BACKEND.kernel_module,
                                [os.path.join(HERE, "src", "avx512.c")],
                                cpu_features=_plugin.BACKEND.cpu_features)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
