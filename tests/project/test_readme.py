"""The README's set-up commands are the ones CI runs, and its examples still work."""

from __future__ import annotations

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


def test_readme_python_example_runs():
    block = re.search(r"```python\nimport argonishche\n(.*?)\n```",
                      (ROOT / "README.md").read_text(), flags=re.S).group(1)
    # Same calls at a small memory cost, so the example is checked without slowing the suite.
    block = block.replace("memory_cost=65536", "memory_cost=64")
    block = block.replace("PasswordHasher()", "PasswordHasher(memory_cost=64, time_cost=1)")
    namespace = {}
    exec("import argonishche\n" + block, namespace)  # noqa: S102 - our own README
    assert namespace["ph"].verify(namespace["h"], "s3cret") is True
    assert len(namespace["tag"]) == 32
