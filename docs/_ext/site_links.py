"""Every internal link and reference on the built site resolves (checked offline, after the build).

Sphinx's own checks (``-n``, MyST's cross-reference warnings) cover the references it resolves
itself; this one reads what a reader gets, the HTML: each relative ``href`` and ``src`` must name
a file the build wrote (or copied), and each ``#fragment`` an ``id`` on that page.  It also
refuses a reference written as quoted plain text, ``see "Testing"``: a reader cannot follow it,
and nothing checks that the section it names exists, or is on the page it seems to be.

Each problem is a warning, so ``sphinx-build -W`` (tox -e docs) fails on it.  External links are
not fetched (the build is offline) and not checked.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx

# Sphinx and docutils are imported where they are used: tests/project/test_docs_site.py checks
# this module's finders without them.

#: ``see "Testing"``, ``(see "The ABI")``, ``README.md's "Coming from argon2-cffi" table`` (and
#: their smart-quoted forms).
_QUOTED = r"[\"\u201c]([A-Z][^\"\u201d]{1,60})[\"\u201d]"
QUOTED_REFERENCE = re.compile(
    rf"\bsee (?:the )?{_QUOTED}|{_QUOTED} (?:table|section|page|below|above)\b")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and (name == "id" or tag == "a"):
                self.ids.add(value)
            elif name == "href" and tag in ("a", "link", "area") or \
                    name == "src" and tag in ("img", "script", "iframe", "source"):
                self.links.append(value)


def _is_internal(link: str) -> bool:
    parts = urlsplit(link)
    return not (parts.scheme or parts.netloc or link.startswith("//"))


def broken_links(outdir: Path) -> list[str]:
    """``page.html: link (why)`` for each relative link in *outdir*'s HTML that does not resolve."""
    pages: dict[Path, _Links] = {}
    for page in sorted(outdir.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page.resolve()] = parser
    problems = []
    for page, parser in pages.items():
        for link in parser.links:
            if not _is_internal(link):
                continue
            parts = urlsplit(link)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            where = f"{page.relative_to(outdir.resolve())}: {link}"
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                problems.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where} (no id {parts.fragment!r} on "
                                    f"{target.relative_to(outdir.resolve())})")
    return problems


def quoted_references(doctree: nodes.Node) -> list[str]:
    """The ``see "Section"`` references written as plain text in *doctree*'s prose."""
    from docutils import nodes

    found = []
    for text in doctree.findall(nodes.Text):
        parent = text.parent
        if isinstance(parent, (nodes.literal, nodes.literal_block, nodes.raw)) or \
                isinstance(parent, nodes.Element) and \
                parent.get("testnodetype") in ("doctest", "testcode", "testoutput"):
            continue
        found += [match.group(0) for match in QUOTED_REFERENCE.finditer(text.astext())]
    return found


def _logger() -> Any:
    from sphinx.util import logging

    return logging.getLogger(__name__)


def check_doctree(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if docname == "changelog":
        return  # the CHANGELOG is history: its entries keep the names sections had then
    for reference in quoted_references(doctree):
        _logger().warning("a cross-reference written as quoted text, %s: make it a link "
                       "([text](page.md#anchor))", reference, location=docname)


def check_html(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    problems = broken_links(Path(app.outdir))
    logger = _logger()
    for problem in problems:
        logger.warning("broken internal link: %s", problem)
    logger.info("argonishche docs: internal links checked, %d broken", len(problems))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-resolved", check_doctree)
    app.connect("build-finished", check_html)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
