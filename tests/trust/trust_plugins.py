"""The misbehaving plugins the test_plugin_trust*.py tests install, by key (conftest.py's
``wheels`` fixture builds them all once per session)."""

from __future__ import annotations

from plugin_wheels import Kernels, Plugin, backend_plugin, kernel_plugin

SHIM = '''\
"""The plugin's kernel module: the compiled kernels, re-exported."""
from ._kernels_impl import ffi, lib  # noqa: F401
'''

# What a concurrent `pip install -U` does to an installed plugin: the new build renamed over the
# loaded one's path, here right after the plugin imported it (TRUST_SWAP_IN names the new file).
SWAP_AT_IMPORT = '''\
import os
import shutil

from . import _kernels

_new_build = os.environ.get("TRUST_SWAP_IN")
if _new_build:
    shutil.copyfile(_new_build, _kernels.__file__ + ".new")
    os.replace(_kernels.__file__ + ".new", _kernels.__file__)
'''

# Another entry point of the same distribution, imported first: it makes every check pass.
PATCH_THE_CHECKS = '''\
import argonishche._trust.certification_checks
import argonishche._trust.self_test


def _nothing_wrong(*args, **kwargs):
    return []


argonishche._trust.certification_checks.failures = _nothing_wrong
argonishche._trust.self_test.run = _nothing_wrong
APPLIED = True


@argonishche.hookimpl
def argonishche_register_backends(register):
    pass
'''


def _shim(version: str, *defines: str) -> Plugin:
    return Plugin("trust-shim", "trust_shim", {"shim": "trust_shim"}, version=version,
                  kernels=(Kernels("_kernels_impl", defines),),
                  files={"__init__.py": backend_plugin("shim", "trust_shim.kernels"),
                         "kernels.py": SHIM})


#: The third-party plugins, by key.  A run of 8,193 blocks or more in one F call is one the quick
#: self-test cannot afford and certification covers (a message over 1 MiB).
PLUGINS = {
    "timebomb": kernel_plugin("timebomb", "TRUST_G_AFTER_CALLS (1ULL << 20)"),
    "far_g": kernel_plugin("far_g", "TRUST_G_BEHIND 70000"),
    "long_f": kernel_plugin("long_f", "TRUST_F_RUN_FROM 32000"),
    "shim_v1": _shim("1.0"),
    "shim_v2": _shim("2.0", "TRUST_F_RUN_FROM 8193"),
    "swap": kernel_plugin("swap", before=SWAP_AT_IMPORT),
    "swap_new": kernel_plugin("swap", "TRUST_F_RUN_FROM 8193", version="1.1"),
    "right": kernel_plugin("right"),
    "wrong": kernel_plugin("wrong", "TRUST_F_RUN_FROM 8193"),
    "patch": Plugin("trust-patch", "trust_patch",
                    {"a_patch_the_checks": "trust_patch.patch", "patched": "trust_patch"},
                    kernels=(Kernels("_kernels", ("TRUST_F_RUN_FROM 8193",)),),
                    files={"__init__.py": backend_plugin("patched", "trust_patch._kernels"),
                           "patch.py": PATCH_THE_CHECKS}),
    "undeclared": kernel_plugin("undeclared", "TRUST_AVX512_IN_G",
                                cpu_features=("avx", "avx2")),
    "trap": kernel_plugin("trap", "TRUST_F_TRAP_FROM 8193"),
    "hang": kernel_plugin("hang", "TRUST_F_HANG_FROM 8193"),
    "scalar2": kernel_plugin("scalar2"),
    # Registers the same backend name, from an entry point that sorts before the real one's.
    "squatter": kernel_plugin("squatter", backend="scalar2", entry_point="a_scalar2"),
}
