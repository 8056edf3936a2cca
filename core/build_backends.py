"""cffi build scripts for the in-tree kernel backends, one compiled module per row of
backends/table.py built for the target architecture.

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

#: The architecture this build is for (argonishche.build.target_arch: the build interpreter's
#: sysconfig platform, so a cross build or an emulated interpreter builds for its target).
TARGET_ARCH = _build.target_arch()
if TARGET_ARCH == "universal2":
    raise SystemExit("argonishche: a universal2 build would compile every architecture's kernels "
                     "for both slices; build one wheel per architecture (ARCHFLAGS='-arch arm64' "
                     "and _PYTHON_HOST_PLATFORM=macosx-11.0-arm64, as cibuildwheel does)")
#: The rows built: those of TARGET_ARCH, and ref (every architecture's bottom rung).
BUILT = _table.built_for(TARGET_ARCH)

# One builder per backend built, named like it, for setup.py's "build_backends.py:<name>".
globals().update({
    row.name: _build.backend_ffibuilder(_table.kernel_module(row),
                                        [os.path.join(BACKENDS, row.source)],
                                        cpu_features=row.cpu_features)
    for row in BUILT})
