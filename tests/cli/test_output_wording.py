"""The command line's small print (issue 32, item 6): bench's progress bar never glued to a
table, a description on every subcommand's ``--help``, no doubled words ("forced: forced by"),
sub-millisecond latencies shown as such, and counts with the noun agreeing ("1 lane", not
"lane(s)")."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from argonishche import _cli, _info, _tune, _tune_search
from argonishche._bench import progress as progress_module
from argonishche.exceptions import BackendError
from support import make_registry

TINY = ("--repetitions", "2", "--budget", "0.01", "--point", "d,1,64,1")
#: The bar as Progress.render draws it: a title, then 24 cells of '#' and '.'.
BAR = re.compile(r"\[[#.]{24}\]")


# ---- bench's progress bar and the tables --------------------------------------------------------


class TerminalStream(io.StringIO):
    """stdout or stderr of one terminal: every write goes, in order, to the shared *screen*."""

    def __init__(self, screen: list[str]) -> None:
        super().__init__()
        self.screen = screen

    def write(self, text: str) -> int:
        self.screen.append(text)
        return len(text)

    def isatty(self) -> bool:
        return True


def screen_lines(written: str) -> list[str]:
    """The lines a terminal shows for *written*: "\\r\\033[K" (the bar's clear) empties the line
    being written, a newline ends it."""
    lines, current = [], ""
    for token in re.split(r"(\r\033\[K|\n)", written):
        if token == "\r\033[K":
            current = ""
        elif token == "\n":
            lines.append(current)
            current = ""
        else:
            current += token
    return lines + [current]


@pytest.fixture
def terminal(monkeypatch):
    """``terminal()``: stdout and stderr one terminal from then on (pytest sets its own streams
    after fixtures), whose written text is returned; the bar drawn from the first step, and (a
    clock that stands still) only then unless it was cleared: a redraw after a table is the
    fix's doing, not the throttle's."""
    real = progress_module.Progress.__init__

    def at_once(self, *args, **kwargs):
        real(self, *args, **{**kwargs, "delay": 0.0, "clock": lambda: 0.0})
    monkeypatch.setattr(progress_module.Progress, "__init__", at_once)

    def install() -> list[str]:
        screen: list[str] = []
        monkeypatch.setattr(sys, "stdout", TerminalStream(screen))
        monkeypatch.setattr(sys, "stderr", TerminalStream(screen))
        return screen
    return install


def test_bench_tables_start_on_a_line_of_their_own_and_the_bar_comes_back(terminal):
    screen = terminal()
    assert _cli.main(["bench", *TINY]) == 0
    written = "".join(screen)
    assert BAR.search(written), "the bar was never drawn: the test shows nothing"
    lines = screen_lines(written)
    glued = [line for line in lines if BAR.search(line)]
    assert not glued, f"bar text left on screen before output: {glued}"
    headers = [line for line in lines if "Argon2d t=1" in line]
    assert headers and all(line.startswith("Argon2d t=1") for line in headers)
    # BLAKE2b's section follows the Argon2 table: the bar is drawn again for it.
    after_table = written[written.index("Argon2d t=1"):]
    assert re.search(r"blake2b " + BAR.pattern, after_table)
    assert written.endswith("\n") and screen_lines(written)[-1] == ""


def test_a_table_printed_while_the_bar_shows_clears_it_first(monkeypatch):
    screen: list[str] = []
    bar = progress_module.Progress(TerminalStream(screen), delay=0.0, clock=lambda: 0.0,
                                   columns=80)
    bar.start("argon2", 3)
    bar.step("first")
    monkeypatch.setattr(sys, "stdout", TerminalStream(screen))
    with progress_module.printing_above(bar):
        print("a table\nof two lines")
        bar.step("second")
    bar.clear()
    lines = screen_lines("".join(screen))
    assert lines[:2] == ["a table", "of two lines"] and lines[2:] == [""]
    assert "second" in "".join(screen)  # drawn again, though the clock stood still


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")
def test_bench_on_a_real_terminal_prints_no_bar_before_a_table(tmp_path):
    """A pseudo-terminal as stderr (and stdout: one screen): the run is long enough for the bar
    (drawn after a second) by construction: 200 samples of at least 5 ms for each of at least
    two subjects (the selected backend, and each backend)."""
    primary, secondary = os.openpty()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    environ["COLUMNS"] = "200"
    child = subprocess.Popen(
        [sys.executable, "-m", "argonishche", "bench", "--repetitions", "200", "--budget",
         "0.005", "--point", "d,1,8,1", "--no-blake2b"],
        stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary, env=environ)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child is gone and the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert child.wait(timeout=300) == 0
    written = b"".join(chunks).decode().replace("\r\n", "\n")  # the tty's ONLCR
    assert BAR.search(written), "the bar was never drawn: the test shows nothing"
    lines = screen_lines(written)
    assert not [line for line in lines if BAR.search(line)]
    assert any(line.startswith("Argon2d t=1") for line in lines)


# ---- --help --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["hash", "verify", "info", "selftest", "bench", "tune"])
def test_every_subcommand_help_has_a_description(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        _cli.main([command, "--help"])
    assert exit_info.value.code == 0
    # argparse: usage, a blank line, the description if there is one, then the options.
    after_usage = capsys.readouterr().out.split("\n\n")[1]
    assert not after_usage.startswith(("options:", "optional arguments:")), after_usage


# ---- doubled words -------------------------------------------------------------------------------


def test_info_says_forced_once(install, capsys):
    install(make_registry(environ={"ARGONISHCHE_BACKEND": "ref"}))
    assert _cli.main(["info", "--fast"]) == 0
    out = capsys.readouterr().out
    assert "forced by ARGONISHCHE_BACKEND=ref" in out
    assert "forced: forced" not in out


def test_a_blocked_backend_forced_says_blocked_once():
    with pytest.raises(BackendError) as error:
        make_registry(environ={"ARGONISHCHE_BACKEND": "ref",
                               "ARGONISHCHE_DISABLE_BACKENDS": "ref"}).kernel_table("argon2")
    message = str(error.value)
    assert "blocked by ARGONISHCHE_DISABLE_BACKENDS" in message
    assert "blocked: blocked" not in message


# ---- milliseconds --------------------------------------------------------------------------------


def test_tune_shows_a_sub_millisecond_target_and_times(monkeypatch, capsys):
    """--latency 0.02 once printed "at most 0 ms", and 5 us hashes "p95 0.0 ms"."""
    def each_hash_5_microseconds(memory_cost, time_cost, parallelism, concurrency):
        return [0.005] * concurrency, 0.005 * concurrency / 1e3
    monkeypatch.setattr(_tune_search, "timed_batch", each_hash_5_microseconds)
    monkeypatch.setattr(_tune, "tune_kernels", lambda rounds, step=None: {
        "machine": "a test", "core_clock_ghz": 1.0, "kernels": {}})
    _cli.main(["tune", "--latency", "0.02", "--memory-budget", "1", "--concurrency", "1"])
    out = capsys.readouterr().out
    assert "p95 of at most 0.02 ms per hash" in out
    assert re.search(r"p95 +0\.0050 ms per hash \(median 0\.0050; ", out)
    assert not re.search(r"\b0\.0 ms|\b0 ms", out)


@pytest.mark.parametrize("value, shown", [
    (250.0, "250.0"), (1234.56, "1,234.6"), (1.0, "1.0"), (0.5, "0.50"), (0.02, "0.020"),
    (0.0345, "0.035"), (0.0, "0.0"),
])
def test_milliseconds_keep_two_significant_digits_below_one(value, shown):
    assert _tune.milliseconds(value) == shown


# ---- plurals ------------------------------------------------------------------------------------


def test_tune_counts_lanes_threads_and_hashes_in_words(monkeypatch, capsys):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    monkeypatch.setattr(_tune_search, "timed_batch", lambda m, t, p, c: ([1.0] * c, c / 1e3))
    monkeypatch.setattr(_tune, "tune_kernels", lambda rounds, step=None: {
        "machine": "a test", "core_clock_ghz": 1.0, "kernels": {}})
    _cli.main(["tune", "--latency", "10", "--memory-budget", "8", "--concurrency", "1"])
    out = capsys.readouterr().out
    assert "; 1 lane and thread per hash (1 CPU over 1 concurrent hash)" in out
    assert "(s)" not in out


def test_the_memory_budget_lines_count_in_words():
    numbers = {"budget": 2**30, "source": "a test", "held": 0, "in_use": 0, "idle": 0,
               "high_water": 0, "running": 1, "waiting": 2, "idle_seconds": 10,
               "wait_seconds": 10, "huge_pages": False, "huge_pages_why": "a test", "maps": 1,
               "reuses": 0, "waits": 0}
    text = "\n".join(_info.budget_lines(numbers))
    assert "in use by 1 hash," in text and "; 2 hashes waiting" in text
    assert "since start: 1 mapping made, 0 hashes reused kept memory" in text
    assert "(s)" not in text and "(es)" not in text


def test_counted_agrees_with_the_count():
    from argonishche._wording import counted, noun

    assert counted(1, "hash", "hashes") == "1 hash"
    assert counted(0, "hash", "hashes") == "0 hashes"
    assert counted(2_000, "lane") == "2,000 lanes"
    assert noun(["a"], "backend") == "backend" and noun(["a", "b"], "backend") == "backends"


def test_tune_says_forced_once(install, capsys):
    install(make_registry(environ={"ARGONISHCHE_BACKEND": "ref"}))
    assert _cli.main(["tune", "--kernels-only", "--rounds", "8"]) == 0
    out = capsys.readouterr().out
    assert "<- selected: forced by ARGONISHCHE_BACKEND=ref" in out
    assert "(forced): forced" not in out


def test_selftest_says_blocked_once(install, capsys):
    install(make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": "ref"}))
    _cli.main(["selftest"])
    out = capsys.readouterr().out
    assert "ref        not run: blocked by ARGONISHCHE_DISABLE_BACKENDS" in out
    assert "blocked (blocked" not in out


def test_plugin_messages_name_one_backend_or_several():
    from argonishche import _backend_declarations as declarations

    assert declarations.not_imported(frozenset({"fast"})) == (
        ", not imported (it declares backend fast)")
    assert declarations.not_imported(frozenset({"b", "a"})) == (
        ", not imported (it declares backends a, b)")
    assert declarations.reserved_reason(frozenset({"avx2", "ref"}), {"avx2", "ref"}).startswith(
        "not loaded: it declares backends avx2, ref, names of built-in backends of argonishche")
