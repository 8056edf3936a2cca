"""Copy a source tree without its build output, for a build that must compile everything anew.

    python tools/clean_copy.py SOURCE DESTINATION

pip builds a local directory in place, and setuptools skips compiling a module whose object in
``build/`` looks up to date, even when another compiler made it: the tox envs that build a plugin
(``plugins`` with gcc, ``clang`` with clang) build from a clean copy instead.
"""

from __future__ import annotations

import shutil
import sys

if __name__ == "__main__":
    source, destination = sys.argv[1:3]
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "*.so", "*.o"))
