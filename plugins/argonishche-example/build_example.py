"""cffi build script for argonishche_example._kernels, made by argonishche's own helper.

``backend_ffibuilder`` declares the two names the core reads (``argonishche_kernels`` and the
ABI number), adds the directory of the kernel contract and the shared constants
(``argonishche.build.get_include()``) and compiles with -O3 and no -m flags, for exactly the
descriptor's ``cpu_features``, which it records in the kernel table for the registry to check.
"""

import importlib.util
import os

from argonishche.build import backend_ffibuilder

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))

# The descriptor, from the package being built: it is not installed yet, and maybe not on
# sys.path, so it is loaded by path (the one place its name and features are written).
_spec = importlib.util.spec_from_file_location(
    "argonishche_example_descriptor", os.path.join(HERE, "argonishche_example", "__init__.py"))
_plugin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_plugin)

ffibuilder = backend_ffibuilder(_plugin.BACKEND.kernel_module,
                                [os.path.join(HERE, "src", "example.c")],
                                cpu_features=_plugin.BACKEND.cpu_features)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
