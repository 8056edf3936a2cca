"""The documentation site under docs/ has its pages, runs its examples, and the README stays short.

Python examples must be doctest directives (```{doctest}, or ```{testcode} with
```{testoutput}), which `sphinx-build -b doctest` (tox -e docs) runs: a plain ```python block is
never run, so it can rot unseen.  The one exception is a file listing that cannot run where the
docs are built (a setup.py, code that needs Ray), which must say what it is in a :caption:.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]

#: The pages issue 25 asks for (docs/migration/pwdlib.md is the pwdlib hasher's guide).
REQUIRED = ["getting-started", "api", "backends", "plugins", "memory", "threads", "cli",
            "benchmarks", "migration/argon2-cffi", "migration/hashlib", "migration/django",
            "migration/pwdlib", "changelog"]
README_MAX_LINES = 150

#: An opening fence and its info string (```python, ```{doctest}, ~~~py ...).
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>[^\n`]*)$", re.M)
PLAIN_PYTHON = {"python", "py", "python3", "py3", "pycon", "ipython", "ipython3", "pytb"}


def opening_fences(text: str) -> list[tuple[int, str, str]]:
    """(line number, info string, the block's first lines) of every block's opening fence."""
    found, inside = [], None
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if not match:
            continue
        if inside is None:
            inside = match["fence"]
            found.append((number, match["info"].strip(), "\n".join(lines[number:number + 2])))
        elif match["fence"].startswith(inside) and not match["info"].strip():
            inside = None
    return found


def plain_python_blocks(text: str) -> list[str]:
    problems = []
    for number, info, start in opening_fences(text):
        language = info.split()[0].lower() if info else ""
        if language in PLAIN_PYTHON:
            problems.append(f"line {number}: ```{info}")
        elif language == "{code-block}" and info.split()[1:2] and \
                info.split()[1].lower() in PLAIN_PYTHON and ":caption:" not in start:
            problems.append(f"line {number}: ```{info} without a :caption: saying what it is")
    return problems


def test_the_finder_sees_plain_python_blocks():
    # So that the check below cannot pass by missing a block.
    text = ("```python\nx = 1\n```\n\n  ```pycon\n>>> 1\n```\n\n```{doctest}\n>>> 1\n1\n```\n"
            "```{code-block} python\nx = 1\n```\n"
            "```{code-block} python\n:caption: setup.py\n\nsetup()\n```\n"
            "````text\n```python\n````\n")
    assert plain_python_blocks(text) == [
        "line 1: ```python", "line 5: ```pycon",
        "line 13: ```{code-block} python without a :caption: saying what it is"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_page_has_a_python_block_that_is_not_run(page):
    problems = plain_python_blocks(page.read_text())
    assert not problems, (f"{page.relative_to(ROOT)}: write Python examples as ```{{doctest}} "
                          f"or ```{{testcode}} (run by tox -e docs): {problems}")


def toctree_entries() -> set[str]:
    entries = set()
    for page in DOCS.rglob("*.md"):
        base = page.parent.relative_to(DOCS)
        for block in re.findall(r"```\{toctree\}\n(.*?)```", page.read_text(), re.S):
            for line in block.splitlines():
                line = line.strip()
                if line and not line.startswith(":"):
                    entries.add(str((base / line).as_posix()).lstrip("./"))
    return entries


@pytest.mark.parametrize("name", REQUIRED)
def test_every_required_page_exists_and_is_in_a_toctree(name):
    assert (DOCS / f"{name}.md").is_file(), f"docs/{name}.md is missing"
    assert name in toctree_entries(), f"docs/{name}.md is in no toctree"


def test_every_page_is_in_a_toctree():
    # Sphinx -W fails on an orphan too; this says which, without building.
    pages = {str(page.relative_to(DOCS).with_suffix("").as_posix())
             for page in DOCS.rglob("*.md")}
    assert pages - {"index"} <= toctree_entries(), sorted(pages - {"index"} - toctree_entries())


def test_the_plugin_guide_moved_into_the_site():
    assert not (ROOT / "PLUGINS.md").exists(), "the guide is docs/plugins.md"


def test_the_readme_stays_short_and_links_into_the_docs():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES, (
        f"README.md has {len(text.splitlines())} lines: move the detail into docs/")
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert {f"docs/{name}.md" for name in REQUIRED if name != "changelog"} <= set(links), links
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, f"README links to missing pages: {missing}"


def site_links():
    """docs/_ext/site_links.py, the check tox -e docs runs over the built site."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_links", DOCS / "_ext" / "site_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_check_finds_broken_links_and_anchors(tmp_path):
    # So that the check tox -e docs runs (sphinx-build -W fails on what it finds) cannot pass by
    # missing a broken link.
    (tmp_path / "sub").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "a.png").write_bytes(b"")
    (tmp_path / "index.html").write_text(
        '<h1 id="top">x</h1><a href="sub/page.html#here">ok</a><a href="#top">ok</a>'
        '<img src="_static/a.png"><a href="https://example.org/x">external</a>'
        '<a href="missing.html">1</a><a href="sub/page.html#nowhere">2</a>'
        '<a href="#gone">3</a><img src="_static/b.png">')
    (tmp_path / "sub" / "page.html").write_text('<section id="here"><a href="../index.html">ok</a>')
    problems = site_links().broken_links(tmp_path)
    assert problems == [
        "index.html: missing.html (no such file)",
        "index.html: sub/page.html#nowhere (no id 'nowhere' on sub/page.html)",
        "index.html: #gone (no id 'gone' on index.html)",
        "index.html: _static/b.png (no such file)"], problems


@pytest.mark.parametrize("text, found", [
    ('a plugin is not used (see "Plugins").', ['see "Plugins"']),
    ("see \u201cThe trust model\u201d", ["see \u201cThe trust model\u201d"]),
    ('README.md\'s "Coming from argon2-cffi" table lists', ['"Coming from argon2-cffi" table']),
    ('see [the trust model](plugins.md#the-trust-model)', []),
    ('prints "Verdict: noisy" on stderr', []),
])
def test_the_site_check_finds_references_written_as_quoted_text(text, found):
    assert [m.group(0) for m in site_links().QUOTED_REFERENCE.finditer(text)] == found
