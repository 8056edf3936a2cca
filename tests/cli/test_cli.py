"""The ``argonishche`` command: every subcommand's output, exit status and usage errors.

``hash`` must print what the reference ``argon2`` program (phc-winner-argon2's ``run.c``, the
Debian package ``argon2``) prints, byte for byte except the time: the GOLDEN texts below were
captured from /usr/bin/argon2 (Debian 12, 0~20171227-0.3+deb12u1) so that the format is checked
without the binary, and where the binary is installed the same cases are run against it too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import argonishche
import pytest
from argonishche import _cli, _registry
from support import call_cli as call
from support import make_registry

REFERENCE = shutil.which("argon2")
TIME_LINE = re.compile(r"(?m)^\d+\.\d{3} seconds$")


def run(*args, stdin=None, inherit=False, **env):
    """``python -m argonishche ARGS`` in a fresh process, without the caller's ARGONISHCHE_*
    unless *inherit* (to compare with this process, which a tox env may force a backend in)."""
    environ = {k: v for k, v in os.environ.items()
               if inherit or not k.startswith("ARGONISHCHE_")}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "argonishche", *args], env=environ,
                          input=stdin, capture_output=True, timeout=120,
                          text=not isinstance(stdin, bytes))


def masked(text: str) -> str:
    return TIME_LINE.sub("<time> seconds", text)


# (arguments, password on stdin, what /usr/bin/argon2 printed with its time line masked)
GOLDEN = [
    (("somesalt", "-t", "1", "-k", "64"), b"password",
     "Type:\t\tArgon2i\nIterations:\t1\nMemory:\t\t64 KiB\nParallelism:\t1\n"
     "Hash:\t\t9bec782fb84dd994630417dc331dbd068e49749c48139d9daad33a23fc068c36\n"
     "Encoded:\t$argon2i$v=19$m=64,t=1,p=1$c29tZXNhbHQ$m+x4L7hN2ZRjBBfcMx29Bo5JdJxIE52dqtM6I/wGjDY\n"
     "<time> seconds\nVerification ok\n"),
    # The trailing newline is part of the password, as for the reference (it reads all stdin).
    (("somesalt", "-id", "-t", "2", "-m", "6", "-p", "2", "-l", "16"), b"password\n",
     "Type:\t\tArgon2id\nIterations:\t2\nMemory:\t\t64 KiB\nParallelism:\t2\n"
     "Hash:\t\t7d15c5d77ca7994bb478b9dc2838906d\n"
     "Encoded:\t$argon2id$v=19$m=64,t=2,p=2$c29tZXNhbHQ$fRXF13ynmUu0eLncKDiQbQ\n"
     "<time> seconds\nVerification ok\n"),
    (("somesalt", "-d", "-t", "1", "-k", "64", "-e"), b"pw",
     "$argon2d$v=19$m=64,t=1,p=1$c29tZXNhbHQ$nhEGVzAtpc29U3gGFcMH3tz9JFKyUdFYMwyX9IgouW4\n"),
    (("somesalt", "-d", "-t", "1", "-k", "64", "-r"), b"pw",
     "9e110657302da5cdbd53780615c307dedcfd2452b251d158330c97f48828b96e\n"),
    (("somesalt", "-v", "10", "-t", "1", "-k", "64"), b"pw",
     "Type:\t\tArgon2i\nIterations:\t1\nMemory:\t\t64 KiB\nParallelism:\t1\n"
     "Hash:\t\t9a6e57239a7b1b56c804a212d0cbaa5dbd71bab9a092b77e405b3981b46d5ca5\n"
     "Encoded:\t$argon2i$v=16$m=64,t=1,p=1$c29tZXNhbHQ$mm5XI5p7G1bIBKIS0MuqXb1xurmgkrd+QFs5gbRtXKU\n"
     "<time> seconds\nVerification ok\n"),
    # The reference's defaults: Argon2i, t=3, m=4096 KiB, p=1, 32 bytes, version 0x13.
    (("saltsaltsalt",), b"correct horse",
     "Type:\t\tArgon2i\nIterations:\t3\nMemory:\t\t4096 KiB\nParallelism:\t1\n"
     "Hash:\t\t90b7967f7a60c524e3338abf4d00d59c78399ef051e29fcc8d7037efd0a729ce\n"
     "Encoded:\t$argon2i$v=19$m=4096,t=3,p=1$c2FsdHNhbHRzYWx0$kLeWf3pgxSTjM4q/TQDVnHg5nvBR4p/MjXA379CnKc4\n"
     "<time> seconds\nVerification ok\n"),
    # Salt and password are bytes: the salt's UTF-8 from argv, the password's from stdin.
    (("s\u00e4ltsalz", "-id", "-t", "1", "-k", "32", "-l", "8"), "p\u00e4ssw\u00f6rd".encode(),
     "Type:\t\tArgon2id\nIterations:\t1\nMemory:\t\t32 KiB\nParallelism:\t1\n"
     "Hash:\t\t3fcec070e4fb0469\nEncoded:\t$argon2id$v=19$m=32,t=1,p=1$c8OkbHRzYWx6$P87AcOT7BGk\n"
     "<time> seconds\nVerification ok\n"),
    (("somesalt", "-i", "-t", "1", "-k", "64", "-r"), b"x\x00y",
     "87519799442ab87443fcbe7cf386f5c4c27afc84a52e7377a4cadc32977f2eb4\n"),
]
GOLDEN_IDS = [" ".join(args) for args, _, _ in GOLDEN]


# ---- hash -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "password", "expected"), GOLDEN, ids=GOLDEN_IDS)
def test_hash_prints_what_the_reference_argon2_printed(capsys, monkeypatch, args, password,
                                                       expected):
    status, out, err = call(capsys, monkeypatch, "hash", *args, stdin=password)
    assert status == 0, err
    assert masked(out) == expected
    if "-e" not in args and "-r" not in args:
        assert TIME_LINE.search(out), "the time line is '%2.3f seconds'"


@pytest.mark.skipif(REFERENCE is None, reason="the reference argon2 program is not installed "
                                              "(Debian: apt-get install argon2)")
@pytest.mark.parametrize(("args", "password"), [case[:2] for case in GOLDEN], ids=GOLDEN_IDS)
def test_hash_matches_the_installed_reference_program_byte_for_byte(args, password):
    theirs = subprocess.run([REFERENCE, *args], input=password, capture_output=True, timeout=60)
    ours = run("hash", *args, stdin=password)
    assert (ours.returncode, theirs.returncode) == (0, 0), ours.stderr
    assert masked(ours.stdout.decode()) == masked(theirs.stdout.decode())


@pytest.mark.skipif(REFERENCE is None, reason="the reference argon2 program is not installed")
def test_an_encoded_hash_from_the_reference_program_verifies_here():
    encoded = subprocess.run([REFERENCE, "somesalt", "-id", "-t", "1", "-k", "64", "-e"],
                             input=b"from argon2\n", capture_output=True, check=True
                             ).stdout.decode().strip()
    assert run("verify", encoded, stdin=b"from argon2\n").returncode == 0
    assert run("verify", encoded, stdin=b"from argon2").returncode == 1


def test_hash_notes_backend_allocator_and_wipe_on_stderr_only(capsys, monkeypatch):
    status, out, err = call(capsys, monkeypatch, "hash", "somesalt", "-t", "1", "-k", "64",
                            "--backend", "ref", "--allocator", "system", stdin=b"pw")
    assert status == 0
    assert "argonishche" not in out and "allocator" not in out
    assert err.startswith("[argonishche] backend ref, allocator system, wipe on")
    assert "wall time" in err


def test_hash_note_names_the_defaults(capsys, monkeypatch):
    _, _, err = call(capsys, monkeypatch, "hash", "somesalt", "-t", "1", "-k", "64", stdin=b"p")
    reg = _registry.get()
    assert f"backend {reg.selected_name('argon2')}, allocator {reg.allocator_name}," in err


@pytest.mark.parametrize("flag", ["-e", "-r"])
def test_hash_e_and_r_print_one_line_and_nothing_on_stderr(capsys, monkeypatch, flag):
    status, out, err = call(capsys, monkeypatch, "hash", "somesalt", "-t", "1", "-k", "64", flag,
                            stdin=b"pw")
    assert status == 0 and err == ""
    assert out.count("\n") == 1


def test_hash_memory_flags_mean_what_the_reference_means(capsys, monkeypatch):
    _, by_log, _ = call(capsys, monkeypatch, "hash", "somesalt", "-t", "1", "-m", "7", "-e",
                        stdin=b"pw")
    _, by_kib, _ = call(capsys, monkeypatch, "hash", "somesalt", "-t", "1", "-k", "128", "-e",
                        stdin=b"pw")
    assert by_log == by_kib
    assert "$m=128,t=1,p=1$" in by_log


def test_hash_secret_and_associated_data_change_the_tag_and_verify(capsys, monkeypatch,
                                                                  tmp_path):
    secret = tmp_path / "pepper"
    secret.write_bytes(b"pepper\n")
    base = ("somesalt", "-id", "-t", "1", "-k", "64", "-e")
    _, plain, _ = call(capsys, monkeypatch, "hash", *base, stdin=b"pw")
    _, peppered, _ = call(capsys, monkeypatch, "hash", *base, "--secret-file", str(secret),
                          "--ad", "user 7", stdin=b"pw")
    assert plain != peppered
    expected = argonishche.argon2_hash_encoded(b"pw", b"somesalt", type="id", time_cost=1,
                                               memory_cost=64, parallelism=1,
                                               secret=b"pepper\n", associated_data=b"user 7")
    assert peppered.strip() == expected
    encoded = peppered.strip()
    assert call(capsys, monkeypatch, "verify", encoded, "--secret-file", str(secret),
                "--ad", "user 7", stdin=b"pw")[0] == 0
    assert call(capsys, monkeypatch, "verify", encoded, stdin=b"pw")[0] == 1
    assert call(capsys, monkeypatch, "verify", encoded, "--secret-file", str(secret),
                "--ad", "user 8", stdin=b"pw")[0] == 1


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (("short",), b"pw", "Error: salt must be 8.."),
    (("somesalt",), b"", "Error: no password read"),
    (("somesalt", "-k", "4"), b"pw", "Error: -m/-k: memory_cost must be in 8.."),
    (("somesalt", "-k", "64", "-p", "9"), b"pw", "Error: -m/-k: memory_cost must be in 72.."),
    (("somesalt", "-l", "3"), b"pw", "Error: -l: hash_len must be in 4.."),
    (("somesalt", "--backend", "nosuch"), b"pw", "Error: backend 'nosuch' cannot be used"),
    (("somesalt", "--allocator", "nosuch"), b"pw", "Error: allocator 'nosuch'"),
    (("somesalt", "--secret-file", "/nonexistent/pepper"), b"pw", "Error: --secret-file: "),
], ids=["short salt", "no password", "memory", "memory per lane", "hash length",
        "backend", "allocator", "secret file"])
def test_hash_bad_input_is_status_2_with_the_error_on_stderr_and_nothing_on_stdout(
        capsys, monkeypatch, install, args, stdin, message):
    # A registry of the test's own: an unknown allocator imports the plugins a forced built-in
    # backend deferred, and adds their backends to the registry that asked.
    install(make_registry(environ=dict(os.environ)))
    status, out, err = call(capsys, monkeypatch, "hash", *args, stdin=stdin)
    assert status == 2
    assert out == ""
    assert err.startswith(message)


@pytest.mark.parametrize("args", [
    ("somesalt", "-q"),                     # unknown flag
    ("somesalt", "-e", "-r"),               # the reference: "cannot provide both -e and -r"
    ("somesalt", "-i", "-d"),               # the reference: "cannot specify multiple types"
    ("somesalt", "-m", "10", "-k", "64"),   # the reference: "-m or -k can only be used once"
    ("somesalt", "-m", "33"),               # the reference: "bad numeric input for -m"
    ("somesalt", "-t", "0"),
    ("somesalt", "-t", "many"),
    ("somesalt", "-p", "0"),
    ("somesalt", "-v", "12"),
    ("somesalt", "-t"),                     # the reference: "missing -t argument"
    (),                                     # no salt
])
def test_hash_bad_flags_are_a_usage_message_and_status_2(capsys, monkeypatch, args):
    status, out, err = call(capsys, monkeypatch, "hash", *args, stdin=b"pw")
    assert status == 2
    assert out == ""
    assert "usage: argonishche" in err


def test_hash_as_a_console_script_reads_binary_stdin():
    out = run("hash", "somesalt", "-t", "1", "-k", "64", "-r", stdin=b"x\x00y")
    assert out.returncode == 0, out.stderr
    assert out.stdout == b"87519799442ab87443fcbe7cf386f5c4c27afc84a52e7377a4cadc32977f2eb4\n"


# ---- verify -----------------------------------------------------------------------------------

ENCODED = "$argon2d$v=19$m=64,t=1,p=1$c29tZXNhbHQ$nhEGVzAtpc29U3gGFcMH3tz9JFKyUdFYMwyX9IgouW4"


def test_verify_ok_is_status_0(capsys, monkeypatch):
    assert call(capsys, monkeypatch, "verify", ENCODED, stdin=b"pw") == (
        0, "Verification ok\n", "")


def test_verify_mismatch_is_status_1_with_the_reference_message_on_stderr(capsys, monkeypatch):
    status, out, err = call(capsys, monkeypatch, "verify", ENCODED, stdin=b"pw\n")
    assert (status, out) == (1, "")
    assert err == "Error: The password does not match the supplied hash\n"


@pytest.mark.parametrize(("encoded", "message"), [
    ("not a hash", "Error: encoded hash must start with '$argon2'"),
    (ENCODED[:-1] + "!", "Error: "),
    ("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$AAAA", "Error: hash has invalid parameters"),
    (ENCODED.replace("v=19", "v=18"), "Error: "),
])
def test_verify_malformed_hash_is_status_2(capsys, monkeypatch, encoded, message):
    status, out, err = call(capsys, monkeypatch, "verify", encoded, stdin=b"pw")
    assert (status, out) == (2, "")
    assert err.startswith(message)


def test_verify_bad_flags_are_a_usage_message_and_status_2(capsys, monkeypatch):
    for args in ((), (ENCODED, "--frobnicate")):
        status, out, err = call(capsys, monkeypatch, "verify", *args, stdin=b"pw")
        assert status == 2 and out == ""
        assert "usage: argonishche" in err


def test_verify_as_a_console_script_exit_statuses():
    assert run("verify", ENCODED, stdin=b"pw").returncode == 0
    assert run("verify", ENCODED, stdin=b"wrong").returncode == 1
    assert run("verify", "junk", stdin=b"pw").returncode == 2


def test_what_hash_prints_verifies(capsys, monkeypatch):
    _, encoded, _ = call(capsys, monkeypatch, "hash", "saltsalt", "-id", "-t", "2", "-k", "96",
                         "-p", "3", "-e", stdin=b"line\n")
    assert call(capsys, monkeypatch, "verify", encoded.strip(), stdin=b"line\n")[0] == 0
    assert call(capsys, monkeypatch, "verify", encoded.strip(), stdin=b"line")[0] == 1


# ---- info, selftest -------------------------------------------------------------------------


def test_info_lists_cpu_features_every_backend_and_the_selection():
    out = run("info", inherit=True)
    assert out.returncode == 0, out.stderr
    assert "CPU features (CPUID/XGETBV in-process):" in out.stdout
    assert "py-cpuinfo flags" in out.stdout
    for backend in argonishche.backends():
        assert backend.name in out.stdout
    assert f"Selected for argon2: {argonishche.selected_backend('argon2')}" in out.stdout


def test_info_json_is_machine_readable():
    out = run("info", "--json", "--fast", inherit=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["selected"]["argon2"] == argonishche.selected_backend("argon2")
    assert {b["name"] for b in report["backends"]} >= {"ref"}
    assert "py_cpuinfo" not in report["cpu"]


def test_info_shows_a_forced_backend_error_and_fails():
    out = run("info", "--fast", ARGONISHCHE_BACKEND="nosuch")
    assert out.returncode == 1
    assert "ERROR: ARGONISHCHE_BACKEND='nosuch': must be a registered backend" in out.stdout


def test_info_shows_blocked_backends():
    out = run("info", "--json", "--fast", ARGONISHCHE_DISABLE_BACKENDS="ref")
    states = {b["name"]: b["state"] for b in json.loads(out.stdout)["backends"]}
    assert states["ref"] == "blocked"


def test_selftest_runs_every_vector_on_every_usable_backend():
    out = run("selftest")
    assert out.returncode == 0, out.stdout + out.stderr
    for backend in argonishche.backends():
        if backend.state in ("selected", "available"):
            assert f"{backend.name:<10} ok" in out.stdout


def test_selftest_fails_when_no_backend_could_be_tested():
    # Before, every backend "not run" still exited 0, so a smoke test of a wheel whose backends
    # were all unusable passed.
    names = ",".join(b.name for b in argonishche.backends())
    out = run("selftest", ARGONISHCHE_DISABLE_BACKENDS=names)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no backend could be tested" in out.stderr
    assert "not run: blocked" in out.stdout


# ---- usage ------------------------------------------------------------------------------------


def test_bad_subcommand_is_a_usage_error():
    out = run("frobnicate")
    assert out.returncode == 2
    assert "usage:" in out.stderr


def test_no_subcommand_is_a_usage_error():
    out = run()
    assert out.returncode == 2
    assert "usage:" in out.stderr


@pytest.mark.parametrize("command", ["hash", "verify", "info", "selftest", "bench"])
def test_every_subcommand_has_help(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        _cli.main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"usage: argonishche {command}" in capsys.readouterr().out


def test_hash_self_check_ignores_verify_limits_for_the_users_own_costs():
    # t=65 is over the default Limits for untrusted hashes, but these costs are the user's flags.
    out = run("hash", "somesalt", "-t", "65", "-k", "64", stdin=b"pw")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == b"Verification ok"
