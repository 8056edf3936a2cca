"""The README's set-up commands are the ones CI runs, and its example still works."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def shell_blocks(text):
    return re.findall(r"```sh\n(.*?)\n```", text, flags=re.S)


def test_ci_runs_exactly_the_readme_test_command():
    readme_commands = shell_blocks((ROOT / "README.md").read_text())
    assert len(readme_commands) == 2, "README must hold exactly two set-up commands"
    ci_lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line and not line.startswith("#")]
    assert ci_lines[-1] == readme_commands[1]


def test_readme_example_runs():
    # The same block docs/index.md includes, so the doctest builder runs it too; here it runs
    # in the plain suite, without Sphinx.
    block = re.search(r"<!-- example-start -->\n```\{doctest\}\n(.*?)\n```\n<!-- example-end -->",
                      (ROOT / "README.md").read_text(), flags=re.S).group(1)
    test = doctest.DocTestParser().get_doctest(block, {}, "README.md", "README.md", 0)
    assert len(test.examples) >= 5, "the README's example has lost its checks"
    results = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert results.failed == 0, f"{results.failed} of the README example's checks failed"
