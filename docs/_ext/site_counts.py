"""Print what the site holds: the pages, and under the doctest builder the examples it ran.

The closing note of a release counts both; this is where they come from, so nobody counts by
hand: ``sphinx-build -b doctest`` ends with a line such as
``argonishche docs: 18 pages, 120 doctested examples, 0 failed``.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def is_example(node: nodes.Node) -> bool:
    """A block the doctest builder runs (its testsetup and testcleanup blocks are not examples)."""
    if isinstance(node, nodes.doctest_block):
        return True
    return (isinstance(node, nodes.Element)
            and node.get("testnodetype") in ("doctest", "testcode"))


def report(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None:
        return
    pages = len(app.env.found_docs)
    line = f"argonishche docs: {pages} pages"
    if app.builder.name == "doctest":
        # A block is one example as a reader sees it (a doctest or testcode block, a >>> block
        # in a docstring); total_tries counts the statements the builder checked in them.
        builder: Any = app.builder
        blocks = sum(len(list(app.env.get_doctree(name).findall(is_example)))
                     for name in sorted(app.env.found_docs))
        line += (f", {blocks} doctested examples ({builder.total_tries} checked statements), "
                 f"{builder.total_failures} failed")
    logger.info(line)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", report)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
