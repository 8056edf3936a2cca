"""tools/sde_standin/sde64, the Intel SDE stand-in of ``tox -e emu-sde``: its command line.

It must accept what SDE documents and refuse what SDE would refuse, or emu-sde would pass an
emulate.py that fails on a user's real SDE; and tools/emulate.py's SDE commands must be ones it
accepts, naming the chip the rung needs.  The stand-in runs as a subprocess (natively, or under
QEMU where a test needs a QEMU model: a skip without qemu-x86_64).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
STANDIN = TOOLS / "sde_standin" / "sde64"
SHOW = "import os, sys; print(os.environ.get('ARGONISHCHE_SDE_STANDIN')); print(sys.argv[1:])"


def load(name: str, path: Path):
    loader = SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


standin = load("sde64_standin", STANDIN)
emulate = load("emulate_under_test", TOOLS / "emulate.py")
needs_qemu = pytest.mark.skipif(shutil.which("qemu-x86_64") is None,
                                reason="qemu-x86_64 is missing (apt-get install qemu-user)")


def sde64(*args: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != standin.ENV}
    return subprocess.run([sys.executable, str(STANDIN), *args], capture_output=True, text=True,
                          timeout=60, env=environ)


def test_the_stand_in_is_executable():
    assert os.access(STANDIN, os.X_OK)


# ---- accepted -----------------------------------------------------------------------------

def test_no_chip_is_the_host_cpu_run_natively():
    """Not "native -CHIP": the tests skip nothing for it, so an emulate.py that lost its chip
    option fails the feature checks instead of skipping them."""
    out = sde64("--", sys.executable, "-c", SHOW)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("host: no chip option")
    assert out.stderr == ""


@needs_qemu
@pytest.mark.parametrize("options", [
    ["-hsw"],
    ["-chip-check-disable", "-hsw"],
    ["-chip_check_disable", "1", "-hsw"],
    ["-hsw", "-chip_check_exe_only"],
    ["-chip_check", "HASWELL", "-hsw"],
])
def test_a_chip_with_chip_check_knobs_runs_under_its_qemu_model(options):
    out = sde64(*options, "--", sys.executable, "-c", SHOW, "-skx", "--")
    assert out.returncode == 0, out.stderr
    how, argv = out.stdout.splitlines()
    assert how == "qemu -hsw " + standin.QEMU_MODELS["hsw"]
    assert argv == "['-skx', '--']"  # after "--", everything is the program's
    assert out.stderr == ""          # silent: children's stderr is what tests compare


def test_an_avx512_chip_runs_natively_and_says_so():
    out = sde64("-skx", "--", sys.executable, "-c", SHOW)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("native -skx: AVX-512 could not be emulated")
    assert "sde64 stand-in: native -skx" in out.stderr


def test_the_program_exit_status_is_sde64s():
    assert sde64("--", sys.executable, "-c", "raise SystemExit(3)").returncode == 3


@pytest.mark.parametrize("option", ["-help", "--help", "-long-help"])
def test_help(option):
    out = sde64(option)
    assert (out.returncode, out.stdout) == (0, standin.USAGE + "\n")


# ---- refused like SDE (status 1, an "E: " line and the usage) ------------------------------

@pytest.mark.parametrize(("args", "error"), [
    (["-hws", "--", "true"], "E: Unknown option -hws"),
    (["--hsw", "--", "true"], "E: Unknown option --hsw"),
    (["-mix", "--", "true"], "E: Unknown option -mix (this stand-in knows"),  # SDE's, not ours
    (["-hsw", "true"], "E: Unexpected argument 'true'"),
    (["-hsw"], "E: Missing '--'"),
    (["-hsw", "--"], "E: Missing application name"),
    (["-hsw", "-skx", "--", "true"], "E: More than one chip option: -hsw -skx"),
    (["-chip_check", "--", "true"], "E: Option -chip_check needs a value"),
    (["--", "-hsw", "true"], "E: Could not find application '-hsw'"),
])
def test_refused(args, error):
    out = sde64(*args)
    assert out.returncode == 1
    assert out.stderr.startswith(error)
    assert out.stderr.endswith(standin.USAGE + "\n")
    assert out.stdout == ""


@pytest.mark.parametrize(("option", "error"), [
    ("-slm", "-slm (Silvermont) is an SDE chip this stand-in has no QEMU model"),
    ("-chip-check-list", "-chip-check-list is SDE's, not implemented here"),
])
def test_what_sde_accepts_and_the_stand_in_cannot_serve_is_a_different_failure(option, error):
    out = sde64(option, "--", "true")
    assert out.returncode == 2
    assert error in out.stderr


# ---- emulate.py's SDE branch against it ---------------------------------------------------

SDE_RUNGS = [cpu for cpu, (_, chip) in emulate.CPUS.items() if chip]


def test_every_rung_sde_can_emulate_has_a_chip():
    assert SDE_RUNGS == ["sse2", "ssse3", "sse41", "sse41avx", "avx2", "avx512"]


@pytest.mark.parametrize("cpu", SDE_RUNGS)
def test_emulate_builds_commands_sde_accepts(cpu, monkeypatch):
    monkeypatch.setenv("PATH", str(STANDIN.parent) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("ARGONISHCHE_EMULATOR", "sde")
    command = emulate.emulator_command(cpu)
    assert command[0] == str(STANDIN)
    chip, program = standin.parse([*command[1:], "python", "-c", "pass"])
    assert "-" + chip == emulate.CPUS[cpu][1]
    assert program == ["python", "-c", "pass"]


@pytest.mark.parametrize("cpu", SDE_RUNGS)
def test_each_rungs_chip_is_the_cpu_of_its_qemu_model(cpu):
    """A wrong chip in emulate.py (-snb for avx2) fails here, before any emulation."""
    qemu_model, chip = emulate.CPUS[cpu]
    chip = chip.removeprefix("-")
    if qemu_model is None:  # AVX-512: only the stand-in's native plan, AVX-512 F, VL and BW
        assert {"avx512f", "avx512vl", "avx512bw"} <= set(standin.NATIVE_MASKS[chip].split())
    else:
        assert standin.QEMU_MODELS[chip].split(",")[0] == qemu_model.split(",")[0]


def test_no_sde_on_path_for_avx512_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("ARGONISHCHE_EMULATOR", raising=False)
    with pytest.raises(SystemExit, match="QEMU cannot emulate avx512.*sde64 on PATH"):
        emulate.emulator_command("avx512")
