"""``python -m argonishche``: the same as the ``argonishche`` command."""

import sys

from ._cli import main

sys.exit(main())
