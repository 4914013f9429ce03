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
