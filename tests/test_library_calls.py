"""``zoo.reproduce`` and ``zoo.train`` as library calls (the CLI wraps them), and registry writes."""
from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import zoo
from zoo import registry_file
from zoo.claims import Check, interval95, run_claim

ROOT = Path(__file__).resolve().parents[1]


def test_reproduce_runs_rows_per_seed_and_decides_from_the_interval():
    r = zoo.reproduce("fixture", seeds=(0, 1, 2))
    assert r.seeds == [0, 1, 2] and set(r.rows) == {"wide", "narrow"}
    wide, narrow = r.per_seed["wide"]["accuracy"], r.per_seed["narrow"]["accuracy"]
    assert len(wide) == 3 and wide != narrow
    (check,) = r.checks
    diffs = [a - b for a, b in zip(wide, narrow, strict=True)]
    mean, _, lo, hi = interval95(diffs)
    assert check["mean"] == pytest.approx(mean) and check["ci95"] == pytest.approx([lo, hi])
    expected = "reproduced" if lo >= 0.05 else "not reproduced" if hi < 0.05 else "inconclusive"
    assert r.verdict == check["verdict"] == expected
    assert r.settings["task"] == "digits_classify" and r.settings["steps"] == 40
    assert r.rows["wide"]["params"]["std"] == 0.0  # same architecture on every seed


def test_one_seed_is_never_a_verdict():
    r = zoo.reproduce("fixture", quick=True)
    assert r.quick and r.seeds == [0] and r.verdict == "inconclusive"
    assert r.checks[0]["ci95"] == [-math.inf, math.inf]


def test_verdicts_are_three_valued():
    per_seed = {"a": {"m": [1.0, 1.1, 0.9]}, "b": {"m": [0.5, 0.6, 0.4]}}
    from zoo.claims import decide

    assert decide(Check("a", "m", baseline="b", margin=0.4), per_seed)["verdict"] == "reproduced"
    assert decide(Check("a", "m", baseline="b", margin=0.6), per_seed)["verdict"] == "not reproduced"
    noisy = {"a": {"m": [1.0, 0.2, 1.8]}, "b": {"m": [0.5, 0.6, 0.4]}}
    assert decide(Check("a", "m", baseline="b", margin=0.4), noisy)["verdict"] == "inconclusive"
    # lower is better: an error that is 0.5 smaller
    assert decide(Check("b", "m", baseline="a", higher=False, margin=0.4), per_seed)["verdict"] == "reproduced"
    # against a fixed threshold, lower is better: b's mean 0.5 has the interval [0.25, 0.75] (t = 4.30, 2 df)
    assert decide(Check("b", "m", higher=False, margin=0.8), per_seed)["verdict"] == "reproduced"
    assert decide(Check("b", "m", higher=False, margin=0.7), per_seed)["verdict"] == "inconclusive"
    assert decide(Check("b", "m", higher=False, margin=0.2), per_seed)["verdict"] == "not reproduced"


def test_reproduce_of_a_plugin_without_claim_names_it():
    with pytest.raises(LookupError, match="no claim"):
        zoo.reproduce("task-digits")


def _registry_copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "registry.yaml", tmp_path / "registry.yaml")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    # build() maps papers to plugin folders next to the file, and rewrites their READMEs: copies, never the checkout's
    top = ROOT / "plugins"
    shutil.copytree(top, tmp_path / "plugins", ignore=lambda folder, names: [] if Path(folder) == top else
                    [n for n in names if n not in ("pyproject.toml", "README.md")])
    return tmp_path / "registry.yaml"


def test_train_saves_pushes_and_records(hub, tmp_path):
    path = _registry_copy(tmp_path)
    # the fixture's paper is not catalogued: recording must fail without touching the file
    before = path.read_bytes()
    with pytest.raises(KeyError, match="not a paper"):
        zoo.train("fixture_mlp.digits", out=tmp_path / "w", push="zoo-fixture/trained", record=path)
    assert path.read_bytes() == before
    t = zoo.train("fixture_mlp.digits", out=tmp_path / "w2", push="zoo-fixture/trained")
    assert t.commit and len(t.commit) == 40 and (t.folder / "model.safetensors").exists()
    assert 0.0 < t.metrics["accuracy"] <= 1.0 and t.model.zoo.tag == "digits"
    again = zoo.create(f"hf-hub:zoo-fixture/trained@{t.commit}", pretrained=True)
    assert again.zoo.sha256 is not None


def test_two_writers_at_once_keep_both_records(tmp_path):
    path = _registry_copy(tmp_path)
    code = ("import sys; from zoo import registry_file; "
            "registry_file.record(sys.argv[1], sys.argv[2], 'reproduction', "
            "{'verdict': 'inconclusive', 'seeds': [0], 'checks': [], 'writer': sys.argv[2]})")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), pid]) for pid in ("gon", "mrl", "derf")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    papers = {p.get("plugin", p["id"]): p for p in yaml.safe_load(path.read_text())["papers"]}
    for pid in ("gon", "mrl", "derf"):
        assert papers[pid]["reproduction"]["writer"] == pid and papers[pid]["status"] == "inconclusive"
    assert not list(tmp_path.glob(".registry.*.tmp"))  # no half-written temp file left behind


def test_run_claim_rejects_a_row_that_returns_text():
    from zoo.claims import Claim, Row

    claim = Claim(plugin="x", claim="c", rows=[Row("a", lambda seed, quick: {"m": "high"})], checks=[Check("a", "m")])
    with pytest.raises(TypeError, match="non-numeric"):
        run_claim(claim)


def test_plugin_readme_section_is_made_from_the_record():
    record = {"verdict": "inconclusive", "date": "2026-12-01", "seeds": [0, 1, 2], "seconds": 12.0,
              "checks": [{"check": "acc: a - b >= 0", "mean": 0.01, "ci95": [-0.02, 0.04], "verdict": "inconclusive"}],
              "rows": {"a": {"acc": {"mean": 0.9, "ci95": [0.88, 0.92]}, "loss": {"mean": 1.0, "ci95": [1, 1]}},
                       "b": {"acc": {"mean": 0.89, "ci95": [0.87, 0.91]}}}}
    block = registry_file.reproduction_block(record)
    assert "**inconclusive**" in block and "| `acc: a - b >= 0` | 0.01 | [-0.02, 0.04] | inconclusive |" in block
    assert "| a | 0.9 ± 0.02 |" in block and "loss" not in block  # only the metrics the checks use
    legacy = registry_file.reproduction_block({"passed": True, "date": "2026-11-29", "summary": "s"})
    assert "Not yet rerun on the claims harness" in legacy and "(passed)" in legacy
