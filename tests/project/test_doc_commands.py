"""Every shell command the documentation gives runs, as written: docs and CI cannot drift.

For each documentation file (README.md and the other top-level pages, docs/**/*.md, and
plugins/*/README.md) that has ```sh blocks, its blocks run in order as one script under
``bash -euo pipefail`` (traced with -x, so a failure shows the command), the way a reader
follows the page on a fresh clone: the working directory is a fresh copy of the repository
holding ``wheelhouse/`` (tools/build_wheelhouse.py's core and plugin wheels), and PATH starts
with an activated venv made by ``python -m venv``, nothing upgraded, with argonishche installed
from that wheelhouse.  README's test command is the one exception: it is .ci/run's last line
(which tests/project/test_readme.py checks), and running the whole CI inside CI would not end.

So that no command escapes these runs, a shell command in a fenced block with another info
string (```bash, ```console, ```shell, or an unlabeled block of commands) fails a check.

The runs take minutes: skipped outside ``tox -e doc-commands``; the check runs everywhere.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from user_venvs import (
    ROOT,
    checked,
    copy_of_the_repository,
    fresh_venv,
    pip_install,
    run,
    user_environment,
)

DOC_TIMEOUT = 900  # seconds for one file's commands (README's set-up command compiles the core)
#: Info strings of fenced blocks that are shell, but not the one the runner runs (```sh).
SHELL_INFO_STRINGS = {"bash", "console", "shell", "shell-session", "shellsession", "zsh",
                      "sh-session", "terminal"}
#: How a line of commands starts, in a block without an info string.
COMMAND_LINE = re.compile(r"^\s*(\$ |(pip3? |python[0-9.]* |\.venv/|tox |git |cd |export |sudo |"
                          r"apt-get |bash |source |printf .*\| *(python|argonishche)|"
                          r"argonishche (hash|verify|info|selftest|bench|tune)\b))")
#: A shell prompt's line: a command shown with its output.
PROMPT_LINE = re.compile(r"^\s*\$ ")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`\n]*)\n(?P<body>.*?)\n"
                   r"(?P=indent)(?P=fence) *$", re.MULTILINE | re.DOTALL)


def documentation_files() -> list[Path]:
    """The pages whose commands a reader runs, relative to the repository."""
    files = sorted(ROOT.glob("*.md")) + sorted((ROOT / "docs").glob("**/*.md")) \
        + sorted(ROOT.glob("plugins/*/README.md"))
    return [path.relative_to(ROOT) for path in files]


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of each fenced code block, the body's indentation removed."""
    blocks = []
    for match in FENCE.finditer(text):
        indent = len(match["indent"])
        body = "\n".join(line[indent:] for line in match["body"].splitlines())
        blocks.append((match["info"].strip(), body))
    return blocks


def ci_test_command() -> str:
    """.ci/run's last line: README's test command, which only CI itself runs."""
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line and not line.startswith("#")]
    return lines[-1]


def commands_of(doc: Path) -> list[str]:
    """The ```sh blocks of *doc*, in order (README's test command left out)."""
    blocks = [body for info, body in fenced_blocks((ROOT / doc).read_text())
              if info.split()[:1] == ["sh"]]
    if doc == Path("README.md"):
        blocks = [body for body in blocks if body.strip() != ci_test_command()]
    return blocks


DOCS_WITH_COMMANDS = [doc for doc in documentation_files() if commands_of(doc)]


def test_the_documentation_is_found():
    found = set(documentation_files())
    assert {Path("README.md"), Path("plugins/argonishche-avx512/README.md"),
            Path("plugins/argonishche-example/README.md")} <= found
    assert Path("plugins/argonishche-avx512/README.md") in DOCS_WITH_COMMANDS


def test_no_shell_command_hides_in_another_kind_of_block():
    hidden = []
    for doc in documentation_files():
        for info, body in fenced_blocks((ROOT / doc).read_text()):
            language = info.split()[0].lower() if info.split() else ""
            if language in SHELL_INFO_STRINGS:
                hidden.append(f"{doc}: a ```{language} block (write ```sh: CI runs those)")
            elif language in ("", "text"):
                # Unlabeled: any line of commands; text (output): a shell prompt's line.
                looks_like = COMMAND_LINE if not language else PROMPT_LINE
                commands = [line for line in body.splitlines() if looks_like.match(line)]
                if commands:
                    hidden.append(f"{doc}: a ```{language} block with commands "
                                  f"({commands[0].strip()!r}): give them a ```sh block of "
                                  "their own (CI runs it), and their output a ```text one")
    assert hidden == [], "\n".join(hidden)


def test_the_checks_find_what_they_look_for():
    """The block reader and the hidden-command check, on a page written to trip them."""
    page = ("text\n\n```sh\npip install x\n```\n\n  ```bash\n  ls\n  ```\n\n"
            "```\n$ python -m argonishche info\n```\n\n```text\nargonishche on Python\n```\n")
    assert fenced_blocks(page) == [("sh", "pip install x"), ("bash", "ls"),
                                   ("", "$ python -m argonishche info"),
                                   ("text", "argonishche on Python")]
    assert COMMAND_LINE.match("$ python -m argonishche info")
    assert COMMAND_LINE.match("pip install --find-links wheelhouse argonishche")
    assert COMMAND_LINE.match("argonishche bench --peers  # the default points, hot")
    assert not COMMAND_LINE.match("argonishche on Python 3.11.7")
    assert PROMPT_LINE.match("$ argonishche tune") and not PROMPT_LINE.match("cost $ 5")


def test_readme_keeps_the_ci_command_out_of_its_run():
    readme_blocks = [body for info, body in fenced_blocks((ROOT / "README.md").read_text())
                     if info == "sh"]
    assert ci_test_command() in [body.strip() for body in readme_blocks]
    assert ci_test_command() not in commands_of(Path("README.md"))


@pytest.mark.parametrize("doc", DOCS_WITH_COMMANDS, ids=str)
def test_the_commands_run_as_written(doc, wheelhouse, tmp_path):
    script = tmp_path / "commands.sh"
    script.write_text("\n".join(commands_of(doc)) + "\n")
    repository = copy_of_the_repository(tmp_path / "repository")
    shutil.copytree(wheelhouse, repository / "wheelhouse")
    venv = fresh_venv(tmp_path / "venv")
    checked(pip_install(venv, "--find-links", repository / "wheelhouse", "argonishche"))
    result = run(["bash", "-euxo", "pipefail", script], timeout=DOC_TIMEOUT, cwd=repository,
                 env=user_environment(venv, tmp_path))
    assert result.returncode == 0, (
        f"{doc}: its ```sh blocks failed (exit {result.returncode}); the commands (+) and "
        f"their output:\n{result.stdout}")
