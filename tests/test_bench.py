"""`zoo bench TASK`: one protocol for every model of a task, an incremental leaderboard the site shows."""
import json
import os
import subprocess
import sys

import pytest
import yaml

from zoo import bench as zbench
from zoo.errors import ModelNotFound
from zoo.task import distributed, solo

OPTS = {"baselines": ["mlp-ln-relu"]}


def _bench(tmp_path, **kw):
    kw.setdefault("models", ["fixture_mlp"])
    kw.setdefault("options", OPTS)
    return zbench.bench("digits_classify", quick=True, out_dir=tmp_path, **kw)


def test_leaderboard_rows_summarise_every_seed_and_keep_the_baselines(tmp_path):
    data = _bench(tmp_path, seeds=[0, 1], steps=5)
    saved = yaml.safe_load((tmp_path / "digits_classify.yaml").read_text())
    assert saved["rows"] == json.loads(json.dumps(data["rows"]))  # what was returned is what was written
    model, base = saved["rows"]
    acc = model["metrics"]["accuracy"]
    assert model["model"] == "fixture_mlp" and acc["n"] == 2 and acc["interval"][0] <= acc["mean"] <= acc["interval"][1]
    assert model["params"] == 64 * 16 + 16 + 16 * 10 + 10 and len(model["key"]) == 64
    assert base["baseline"] and base["model"].startswith("baseline: mlp-ln-relu") and base["next_to"] == ["fixture_mlp"]
    assert saved["protocol"]["seeds"] == [0, 1] and saved["protocol"]["steps"] == 5
    assert saved["command"] == "zoo bench digits_classify" and "zoo-core" in saved["versions"]


def test_unchanged_models_are_kept_and_a_changed_protocol_reruns_them(tmp_path, monkeypatch):
    first = _bench(tmp_path, steps=5)
    assert first["rerun"] == ["fixture_mlp"]

    def must_not_run(*a, **k):
        raise AssertionError("an unchanged model was run again")

    with monkeypatch.context() as m:
        m.setattr(zbench, "run_model", must_not_run)
        again = _bench(tmp_path, steps=5)
    assert again["kept"] == ["fixture_mlp"] and again["rows"] == first["rows"]
    assert _bench(tmp_path, steps=6)["rerun"] == ["fixture_mlp"]  # another protocol: measured again
    assert _bench(tmp_path, steps=6, force=True)["rerun"] == ["fixture_mlp"]


def test_unknown_models_and_tasks_are_named(tmp_path):
    with pytest.raises(ModelNotFound, match="not models of task digits_classify: nope"):
        _bench(tmp_path, models=["nope"])
    assert not list(tmp_path.iterdir())  # nothing written


def test_solo_makes_a_torchrun_process_evaluate_alone(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with solo():
        assert distributed() == (0, 1)


def test_the_site_shows_the_leaderboard(tmp_path):
    from pathlib import Path

    from zoo.site import build_site

    _bench(tmp_path / "lb", steps=5)
    registry = Path(__file__).resolve().parents[1] / "registry.yaml"
    build_site(tmp_path / "site", registry=registry, leaderboards=tmp_path / "lb")
    page = (tmp_path / "site" / "tasks" / "digits_classify.html").read_text()
    assert "fixture_mlp" in page and "baseline: mlp-ln-relu" in page


def test_torchrun_spreads_the_models_over_the_processes(tmp_path):
    from .test_distributed_eval import _free_port

    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
           f"--master_port={_free_port()}", "-m", "zoo.cli", "bench", "digits_classify", "--quick", "--steps", "3",
           "--models", "fixture_mlp,fixture_tied", "--task-arg", 'baselines=["mlp-ln-relu"]', "--out", str(tmp_path),
           "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    saved = yaml.safe_load((tmp_path / "digits_classify.yaml").read_text())
    assert [r["model"] for r in saved["rows"] if not r.get("baseline")] == ["fixture_mlp", "fixture_tied"]
    assert saved["rerun"] == ["fixture_mlp", "fixture_tied"]
