"""Sphinx configuration of argonishche's documentation (MyST Markdown pages, built offline).

``tox -e docs`` builds it with warnings as errors and runs every example through the doctest
builder; nothing is fetched at build time (no intersphinx, no remote images).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "argonishche"
author = "the argonishche authors"
copyright = "2026, the argonishche authors"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "reexports",
    "site_counts",
    "site_links",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
html_static_path = ["_static"]
# Furo (as argon2-cffi and pluggy use), with _static/wide.css: the content column widens with the
# window, so the bench and tune tables and other wide terminal output are not cut at a fixed
# 660 px as alabaster's column cut them; a block wider still scrolls inside itself.  The theme
# ships everything it needs in its wheel: the build stays offline.
html_theme = "furo"
html_title = "argonishche"
html_css_files = ["wide.css"]
# Headings get anchors, so pages can link to each other's sections.
myst_heading_anchors = 3

# autodoc: signatures as written, members in source order, type hints in the signature only.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Names imported only for type checkers (``if TYPE_CHECKING:``), which autodoc cannot import: as
# local names for the annotations it evaluates, else it shows every annotation of that signature
# unevaluated (aliases such as Wipe by name, unresolvable).
autodoc_type_aliases = {"Self": "typing.Self"}
autodoc_default_options = {"show-inheritance": True}

# Every example runs against the installed argonishche, at small costs: the doctest builder
# imports it once, and each example states the rest itself.
doctest_global_setup = """
import argonishche
"""
# >>> examples in the docstrings autodoc renders are run too.
doctest_test_doctest_blocks = "default"

# -n (nitpicky) checks every reference to argonishche's own API.  Without intersphinx (the build
# is offline) the standard library's and other projects' names cannot resolve; internal modules
# (a leading underscore) are deliberately undocumented.
nitpick_ignore_regex = [
    ("py:.*", r"(collections\.abc|enum|typing|concurrent\.futures|cffi|django|pluggy)\..*"),
    ("py:.*", r"argonishche\._.*"),
    # The byte-input and wipe aliases (argonishche._parameter_checks), shown by name where a
    # module imports them for type checkers only.
    ("py:class", r"Buffer|Wipe"),
    # autodoc writes a field type such as "tuple[str, ...]" as targets split at the comma.
    ("py:class", r"(tuple|dict)\[.*"),
]
