"""cffi build script for argonishche_bad_kernels._kernels (src/bad.c), by argonishche's helper."""

import os

from argonishche.build import backend_ffibuilder

SOURCE = os.path.join(os.path.relpath(os.path.dirname(os.path.abspath(__file__))), "src", "bad.c")

ffibuilder = backend_ffibuilder("argonishche_bad_kernels._kernels", [SOURCE])
