"""The peers block of benchmarks/RESULTS.md: pair scripts replace only their own section, and
benchmarks/run.py's report keeps the block when it rewrites the rest of the file."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def peerlib(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    mod = _load("peerlib", ROOT / "benchmarks" / "peers" / "peerlib.py")
    monkeypatch.setattr(mod, "RESULTS", tmp_path / "RESULTS.md")
    return mod


def test_sections_replace_only_themselves(peerlib):
    peerlib.RESULTS.write_text("# zoo benchmark results\n\nmain figures\n")
    peerlib.write_section("siren", "### SIREN\nfirst")
    peerlib.write_section("geoopt", "### geoopt\nrow")
    peerlib.write_section("siren", "### SIREN\nsecond")
    text = peerlib.RESULTS.read_text()
    assert text.startswith("# zoo benchmark results\n\nmain figures\n")
    assert "second" in text and "first" not in text
    assert text.index("### geoopt") < text.index("### SIREN")  # sorted by key
    assert text.count(peerlib.START) == 1 and text.count(peerlib.END) == 1
    assert text.count("### SIREN") == 1


def test_report_keeps_the_peers_block(peerlib, tmp_path, monkeypatch):
    report = _load("report", ROOT / "benchmarks" / "report.py")
    peerlib.RESULTS.write_text("# old\n")
    peerlib.write_section("pykan", "### pykan\nkept row")
    meta = {"command": "x", "date": "d", "wall_s": 60.0, "cpus": 2, "load_start": [0, 0, 0], "load_end": [0, 0, 0],
            "python": "3.11", "versions": {}}
    monkeypatch.setattr(report, "summary_rows", lambda r: [])
    report.write_markdown({"meta": meta}, peerlib.RESULTS, None)
    text = peerlib.RESULTS.read_text()
    assert "# old" not in text and "kept row" in text and text.count(peerlib.START) == 1


def test_interleave_rotates_the_order(peerlib):
    calls: list[str] = []
    out = peerlib.interleave({"a": lambda r: calls.append("a") or {"r": r},
                              "b": lambda r: calls.append("b") or {"r": r}}, 3)
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert [d["r"] for d in out["a"]] == [0, 1, 2]


def test_torchhd_vsa_summary_pools_rounds_and_flags_disagreement(peerlib):
    """The VSA pair's pure-Python summary: accuracy pooled over rounds, per-problem agreement of torchhd (task start)
    with the task's concurrent update, error rates compared by a two-proportion z (0 for equal counts)."""
    vsa = _load("torchhd_vsa", ROOT / "benchmarks" / "peers" / "torchhd_vsa.py")
    s = {"Ms": [16], "iters": 10, "dims": [64], "set_size": 4, "n": 2, "dim": 8, "factors": 3, "alphabet": 20, "probes": 2}
    cell = lambda solved, used, sec: {"solved": solved, "used": used, "seconds": sec}  # noqa: E731
    mem = {"fn": 3, "fp": 5, "decisions": "0110"}
    ours = [{"resonator": {"16/sequential": cell([1, 1], [3, 4], 2.0), "16/concurrent": cell([1, 0], [5, 10], 2.0)},
             "membership": {"64": mem}, "bloom": {"64": {"fn": 0, "fp": 10}}, "probes": 100}] * 2
    peer = [{"resonator": {"16/multiset": cell([0, 0], [10, 10], 4.0), "16/matched": cell([1, 0], [5, 10], 4.0),
                           "16/tie1": cell([1, 0], [5, 9], 4.0), "16/batched_step_s": 0.5},
             "membership": {"64": {"own": {"fn": 3, "fp": 5, "decisions": "1"}, "shared": mem}},
             "bloom": {"64": {"fn": 0, "fp": 40}}, "probes": 100}] * 2
    out = vsa.summarise({"ours": ours, "peer": peer}, s, [{"D": 64, "hashes": 2, "bits": 64}])
    row = out["resonator"][16]
    assert row["task concurrent"]["accuracy"] == 0.5 and row["task concurrent"]["n"] == 4
    assert row["identical torchhd (task start)"] == 1.0 and row["z torchhd (task start)"] == 0.0
    assert row["identical torchhd (task start, ties to +1)"] == 0.5  # one problem took a different number of sweeps
    assert row["task concurrent"]["s_per_step"] == [2.0 / 20] * 2 and row["torchhd (task start)"]["s_per_step"] == [4.0 / 15] * 2
    assert row["z torchhd (multiset start)"] == pytest.approx(-0.5 / (0.25 * 0.75 * 0.5) ** 0.5)  # 0/4 vs 2/4
    assert row["speed torchhd (task start)"] == pytest.approx(2.0)
    assert out["membership"][64]["z"] == 0.0 and out["membership"][64]["shared_identical"] == "2/2"
    assert out["bloom"][64]["z"] < -4  # 10 vs 40 false positives of 200
    from types import SimpleNamespace

    md = vsa._section(SimpleNamespace(command="cmd", quick=True), s, 2, out, {"torch": "x"},
                      {"torch-hd": "5.8.4", "torch": "x", "pybloom-live": "4.0.0"})
    assert "| 16 | torchhd (task start) | 0.500" in md and "| 64 | 2 | 64 |" in md and "--quick" in md
    lo, hi = vsa.wilson(50, 100)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(0.19, abs=0.01)
