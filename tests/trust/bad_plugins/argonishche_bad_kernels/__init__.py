"""The ``bad`` backend: ref's kernels with the bug src/bug.h switches on (see src/bad.c).

Its priority is above every built-in backend's, so argonishche selects it unless its checks
catch the bug.
"""

import argonishche

BACKEND = argonishche.Backend(name="bad", description="ref's kernels with one deliberate bug",
                              kernel_module="argonishche_bad_kernels._kernels", priority=99)


@argonishche.hookimpl
def argonishche_register_backends(register):
    register(BACKEND)
