"""``argonishche bench --compare OLD.json``: each row's ratio to a saved run, and which rows are
flagged slower beyond the runs' noise.  Tiny made-up runs; nothing here measures anything."""

from __future__ import annotations

import json

import pytest
from argonishche import _cli
from argonishche._bench import compare
from argonishche._bench.compare import compare_report


def run(argon2=None, blake2b=None, startup=None, batch=None, machine="x86_64, 2 CPUs"):
    """A saved run with one hot Argon2 table (subject -> samples) and the given other parts."""
    data = {"machine": machine}
    if argon2 is not None:
        data["argon2"] = [{"point": "id t=1 m=64 p=1", "mode": "hot", "results": [
            {"subject": subject, "mode": "hot", "samples_s": samples}
            for subject, samples in argon2.items()]}]
    if blake2b is not None:
        data["blake2b"] = {"64 B": [{"subject": s, "mode": "hot", "samples_s": v}
                                    for s, v in blake2b.items()]}
    if startup is not None:
        data["startup"] = startup
    if batch is not None:
        data["batch"] = {"point": "id t=3 m=65536 p=4", **batch}
    return data


def steady(median, n=5, step=0.001):
    """n samples around *median*, varying by *step* (relative) each: a quiet row."""
    return [median * (1 + step * (k - n // 2)) for k in range(n)]


def verdicts(data):
    return {row["row"]: row["verdict"] for row in data["rows"]}


def test_a_slower_row_is_flagged_and_named():
    old = run({"argonishche (ref)": steady(1e-3), "argonishche (avx2)": steady(5e-4)})
    new = run({"argonishche (ref)": steady(1e-3), "argonishche (avx2)": steady(6e-4)})
    text, data = compare_report(old, new, "old.json")
    assert verdicts(data) == {"argonishche (ref), id t=1 m=64 p=1 hot": "same",
                              "argonishche (avx2), id t=1 m=64 p=1 hot": "slower"}
    assert data["slower"] == ["argonishche (avx2), id t=1 m=64 p=1 hot"]
    avx2 = next(row for row in data["rows"] if "avx2" in row["row"])
    assert avx2["ratio"] == pytest.approx(1.2)
    assert "old.json" in text.splitlines()[0]
    line = next(line for line in text.splitlines() if "avx2" in line)
    assert "1.200x" in line and "SLOWER" in line
    assert text.splitlines()[-1] == ("Compare: 2 rows compared: 1 slower, 0 faster, 1 within "
                                     "noise; SLOWER: argonishche (avx2), id t=1 m=64 p=1 hot")


def test_a_faster_row_is_reported_not_flagged_slower():
    _, data = compare_report(run({"a": steady(1e-3)}), run({"a": steady(0.8e-3)}))
    assert verdicts(data) == {"a, id t=1 m=64 p=1 hot": "faster"}
    assert data["slower"] == []


def test_a_difference_within_the_rows_noise_is_not_flagged():
    noisy = [1.0, 1.1, 1.2, 1.3, 1.4]  # interquartile spread 0.2 / 1.2
    _, data = compare_report(run({"a": noisy}), run({"a": [x * 1.1 for x in noisy]}))
    row = data["rows"][0]
    assert row["ratio"] == pytest.approx(1.1)
    assert row["threshold"] == pytest.approx(2 * 0.2 / 1.2)
    assert row["verdict"] == "same"


def test_a_noisy_run_raises_every_rows_threshold():
    # Row "a" is quiet in both runs, but the other rows of the new run are not.
    noisy = [1.0, 1.2, 1.4, 1.6, 1.8]
    old = run({"a": steady(1.0), "b": steady(1.0), "c": steady(1.0)})
    new = run({"a": steady(1.1), "b": noisy, "c": noisy})
    _, data = compare_report(old, new)
    assert verdicts(data)["a, id t=1 m=64 p=1 hot"] == "same"
    _, quiet = compare_report(old, run({"a": steady(1.1), "b": steady(1.0),
                                        "c": steady(1.0)}))
    assert verdicts(quiet)["a, id t=1 m=64 p=1 hot"] == "slower"


def test_startup_blake2b_and_batch_rows_are_compared_too():
    old = run(blake2b={"ours": steady(1e-7)}, startup={"import argonishche + first hash":
                                                        steady(0.05)},
              batch={"serial_s": steady(0.07), "batch_s": steady(0.036)})
    new = run(blake2b={"ours": steady(1e-7)}, startup={"import argonishche + first hash":
                                                        steady(0.04)},
              batch={"serial_s": steady(0.07), "batch_s": steady(0.05)})
    _, data = compare_report(old, new)
    assert verdicts(data) == {
        "start-up import argonishche + first hash": "faster",
        "BLAKE2b 64 B ours": "same",
        "hash_many, id t=3 m=65536 p=4": "slower",
        "hash_many one thread, id t=3 m=65536 p=4": "same"}


def test_rows_in_one_run_only_are_listed_not_compared():
    text, data = compare_report(run({"a": steady(1.0), "gone": steady(1.0)}),
                                run({"a": steady(1.0), "new": steady(1.0)}))
    assert [row["row"] for row in data["rows"]] == ["a, id t=1 m=64 p=1 hot"]
    assert data["only_now"] == ["new, id t=1 m=64 p=1 hot"]
    assert data["only_saved"] == ["gone, id t=1 m=64 p=1 hot"]
    assert "not in the saved run" in text and "not measured now" in text
    _, nothing = compare_report(run({"x": steady(1.0)}), run({"y": steady(1.0)}))
    assert nothing["rows"] == []


def test_another_machine_is_warned_about():
    text, _ = compare_report(run({"a": steady(1.0)}, machine="arm64, 8 CPUs"),
                             run({"a": steady(1.0)}))
    assert "warning: saved on another machine (arm64, 8 CPUs)" in text


@pytest.mark.parametrize("content, message", [(None, "cannot read"), ("{", "is not JSON"),
                                              ("[1, 2]", "is not a saved bench run")])
def test_load_refuses_what_is_not_a_saved_run(tmp_path, content, message):
    path = tmp_path / "old.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=message):
        compare.load(str(path))


def test_cli_bench_compare_prints_the_ratios_and_saves_them(capsys, tmp_path, monkeypatch):
    from argonishche._bench import suites

    def fake_startup(repetitions, out=None):
        return {"import argonishche + first hash": steady(0.06)}
    monkeypatch.setattr(suites, "bench_startup", fake_startup)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(run(startup={"import argonishche + first hash": steady(0.05)})))
    new = tmp_path / "new.json"
    status = _cli.main(["bench", "--startup", "--no-argon2", "--no-blake2b", "--repetitions",
                        "5", "--compare", str(old), "--json", str(new)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert f"Compared with {old}" in out
    assert "start-up import argonishche + first hash" in out and "1.200x" in out
    assert "SLOWER" in out
    saved = json.loads(new.read_text())
    assert saved["compare"]["slower"] == ["start-up import argonishche + first hash"]


def test_cli_bench_compare_with_a_missing_file_is_status_2_before_any_timing(capsys, tmp_path,
                                                                             monkeypatch):
    from argonishche._bench import suites

    monkeypatch.setattr(suites, "bench_startup", lambda *a, **k: pytest.fail("timed"))
    status = _cli.main(["bench", "--startup", "--compare", str(tmp_path / "nope.json")])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert "--compare: cannot read" in err
