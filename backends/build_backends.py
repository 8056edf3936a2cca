"""cffi build scripts for the in-tree kernel backends, one compiled module per ISA.

setup.py names each builder here in cffi_modules.  They are made by the same helper a third-party
plugin uses (argonishche.build), loaded by path because argonishche is not installed yet.
"""

import importlib.util
import os

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "argonishche_build", os.path.join(HERE, "..", "core", "argonishche", "build.py"))
_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_build)


def _backend(isa):
    return _build.backend_ffibuilder(f"argonishche_backends._{isa}",
                                     [os.path.join(HERE, f"{isa}.c")])


ref = _backend("ref")
sse2 = _backend("sse2")
ssse3 = _backend("ssse3")
sse41 = _backend("sse41")
avx2 = _backend("avx2")
