"""cffi build scripts for the in-tree kernel backends, one compiled module per row of
backends/table.py.

setup.py names each builder here in cffi_modules (``core/build_backends.py:<name>``).  It lives
beside the core's build scripts, outside ``backends/`` (the package ``argonishche_backends``), so
that no build script is installed.  The builders are made by the same helper a third-party plugin
uses (argonishche.build), which compiles each kernel file for exactly the features its row
declares; both files are loaded by path because argonishche is not installed yet.
"""

import importlib.util
import os

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
BACKENDS = os.path.join(HERE, "..", "backends")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_build = _load("argonishche_build", os.path.join(HERE, "argonishche", "build.py"))
_table = _load("argonishche_backends_table", os.path.join(BACKENDS, "table.py"))

# One builder per backend, named like it, for setup.py's "build_backends.py:<name>".
globals().update({
    row.name: _build.backend_ffibuilder(_table.kernel_module(row),
                                        [os.path.join(BACKENDS, row.source)],
                                        cpu_features=row.cpu_features)
    for row in _table.BUILTIN_BACKENDS})
