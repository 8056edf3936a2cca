"""argonishche-example: the ``example`` kernel backend, the template a plugin author copies.

argonishche finds this module through the ``argonishche`` entry point in pyproject.toml, named
``example`` after the backend (so that ``ARGONISHCHE_DISABLE_BACKENDS=example`` keeps it from
being imported at all), and calls the hook below once, at start-up.  Importing it imports no
compiled code: the registry imports ``argonishche_example._kernels`` only after its CPU gate
has seen every feature listed here (none: the kernels are portable C).
"""

import argonishche

__version__ = "0.1.0"

BACKEND = argonishche.Backend(
    name="example",
    description="portable C kernels, the plugin template (plugins/argonishche-example)",
    kernel_module="argonishche_example._kernels",
    # What the compiled kernels need, and exactly what build_example.py compiles them for.
    cpu_features=frozenset(),
    # Below ref (0), the lowest built-in rung: where the ladder decides (ARGONISHCHE_SELECT=
    # priority, a measured tie) every usable built-in wins over it, so installing the template
    # never changes which kernel hashes.  Measurement would pick it only where it were faster
    # than every built-in by more than the tie margin, which these kernels, written for
    # reading, are not.  ARGONISHCHE_BACKEND=example or backend="example" uses it.  A real
    # plugin takes the rung of its instruction set (avx512 is 50).
    priority=-10,
)


@argonishche.hookimpl
def argonishche_register_backends(register):
    register(BACKEND)
