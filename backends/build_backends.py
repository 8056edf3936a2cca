"""cffi build scripts for the in-tree kernel backends, one compiled module per row of table.py.

setup.py names each builder here in cffi_modules (``backends/build_backends.py:<name>``).  They
are made by the same helper a third-party plugin uses (argonishche.build), which compiles each
kernel file for exactly the features its row declares; both files are loaded by path because
argonishche is not installed yet.
"""

import importlib.util
import os

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_build = _load("argonishche_build", os.path.join(HERE, "..", "core", "argonishche", "build.py"))
_table = _load("argonishche_backends_table", os.path.join(HERE, "table.py"))

# One builder per backend, named like it, for setup.py's "build_backends.py:<name>".
globals().update({
    row.name: _build.backend_ffibuilder(_table.kernel_module(row),
                                        [os.path.join(HERE, row.source)],
                                        cpu_features=row.cpu_features)
    for row in _table.BUILTIN_BACKENDS})
