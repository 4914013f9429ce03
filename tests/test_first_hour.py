"""A newcomer's first hour (issue 13): shipped pretrained snapshots, fast failover, clear CLI errors, progress."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import zoo
from tests.helpers import run_py, run_zoo
from zoo import factory, hubformat, registry
from zoo.specs import WeightsSpec


def _fresh_cache(tmp_path: Path) -> dict:
    return {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_CACHE": str(tmp_path / "hf" / "hub"), "ZOO_CACHE_DIR": str(tmp_path / "z")}


def test_shipped_snapshot_loads_offline_with_an_empty_cache(tmp_path):
    # before: WeightsNotFound after the client retried the public Hub (no tag loaded on a fresh install)
    spec = registry.lookup("mrl_digits_cnn")[0]
    pin = spec.weights["digits"].files["model.safetensors"]
    r = run_py("import json, zoo; m = zoo.create('mrl_digits_cnn.digits'); "
               "print(json.dumps([m.zoo.source, m.zoo.sha256, m.zoo.pretrained]))",
               env={**_fresh_cache(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == ["package", pin, True]
    assert not (tmp_path / "hf" / "hub").exists() or not any((tmp_path / "hf" / "hub").iterdir())


def test_dead_endpoint_fails_over_at_once_naming_the_real_cache(tmp_path):
    # a Hub-only tag (official weights, never shipped) with HF_ENDPOINT on a dead port and no offline flag
    env = {**_fresh_cache(tmp_path), "HF_HUB_OFFLINE": None, "HF_ENDPOINT": "http://127.0.0.1:9"}
    r = run_zoo("create", "mlp_kan_deit.official", env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "unreachable (ConnectionRefusedError" in r.stderr  # the probe's words: no retries happened first
    assert str(tmp_path / "hf" / "hub") in r.stderr  # the cache actually used, not ~/.cache/huggingface/hub
    # the shipped snapshot needs no endpoint at all
    ok = run_zoo("create", "mrl_digits_cnn.digits", env=env)
    assert ok.returncode == 0 and '"source": "package"' in ok.stdout


def _snapshot_package(root: Path, model) -> tuple[str, dict[str, str]]:
    pkg = root / "zoo_snapfix"
    (pkg / "weights").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    folder = zoo.save_pretrained(model, pkg / "weights" / "fixture_mlp.digits")
    files = {n: hubformat.manifest({n: folder / n})[n] for n in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME)}
    return "zoo_snapfix:weights/fixture_mlp.digits", files


def test_snapshot_is_held_to_its_pins_and_never_deleted(tmp_path, monkeypatch):
    import torch

    model = zoo.create("fixture_mlp")
    ref, files = _snapshot_package(tmp_path, model)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = registry.lookup("fixture_mlp")[0]
    w = WeightsSpec(repo="zoo-fixture/no-such-repo", snapshot=ref, files=files)
    got = factory._fetch_tag(spec, w)
    assert got.source == "package" and got.digest == files["model.safetensors"]
    fresh = zoo.create("fixture_mlp")
    zoo.weights.load_into(fresh, got.data)
    x = torch.rand(2, 1, 8, 8)
    assert torch.equal(fresh(x), model(x))
    # an edited installed file is not loaded, not deleted, and the Hub is tried instead (which lacks the repo here)
    target = tmp_path / "zoo_snapfix" / "weights" / "fixture_mlp.digits" / "model.safetensors"
    target.write_bytes(target.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises((zoo.WeightsNotFound, zoo.DownloadFailed)):
        factory._fetch_tag(spec, w)
    assert target.exists()


def test_snapshot_spec_is_validated():
    sha = "0" * 64
    with pytest.raises(ValueError, match="needs the sha256"):
        WeightsSpec(repo="a/b", snapshot="pkg:weights/x")
    with pytest.raises(ValueError, match="package:folder"):
        WeightsSpec(repo="a/b", snapshot="pkg:../x", files={"config.json": sha, "model.safetensors": sha})
    w = WeightsSpec(repo="a/b", snapshot="pkg:weights/x", files={"config.json": sha, "model.safetensors": sha})
    assert w.hashed and not w.pinned


def test_publish_pushes_snapshots_and_fills_the_cache(hub, tmp_path, monkeypatch):
    from zoo.cli import main

    assert main(["hub", "publish", "mrl_digits_cnn.digits", "--org", "pub", "--json"]) == 0
    r = run_py("import zoo; m = zoo.create('hf-hub:pub/mrl-digits-cnn', pretrained=True); print(m.zoo.sha256)",
               env={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith(registry.lookup("mrl_digits_cnn")[0].weights["digits"].files["model.safetensors"])


def test_push_fills_the_cache_for_offline_loads(hub, repo_id):
    zoo.push_to_hub(zoo.create("fixture_mlp"), repo_id)
    # before: the README's `HF_HUB_OFFLINE=1 zoo create` right after a push needed one online pull first
    r = run_py(f"import zoo; print(zoo.create('hf-hub:{repo_id}', pretrained=True).zoo.commit)", env={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr


def test_eval_set_means_builder_arguments_as_in_create(capsys):
    from zoo.cli import main

    # before: --set went to the task and ended in a TypeError traceback from the training loop
    assert main(["eval", "fixture_mlp", "--set", "hidden=8", "--steps", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"]["params"] == pytest.approx(64 * 8 + 8 + 8 * 10 + 10)
    assert main(["eval", "fixture_mlp", "--task-arg", "hidden=8", "--steps", "2"]) == 2
    err = capsys.readouterr().err
    assert "UnknownArgument" in err and "--set hidden=" in err
    assert main(["eval", "fixture_mlp", "--task-arg", "oops"]) == 2
    assert "--task-arg expects KEY=VALUE" in capsys.readouterr().err


def test_eval_options_with_their_own_flag_may_come_as_task_args_once(capsys):
    from zoo.cli import main

    # before: `--task-arg steps=2` ended in "got multiple values for keyword argument 'steps'" (a TypeError traceback)
    assert main(["eval", "fixture_mlp", "--task-arg", "steps=2", "--task-arg", "seed=3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["steps"] == 2 and out["config"]["seed"] == 3
    assert main(["eval", "fixture_mlp", "--steps", "2", "--task-arg", "steps=3"]) == 2
    assert "steps given twice: by --steps and by --task-arg steps=...; keep one" in capsys.readouterr().err


def test_eval_of_a_plugin_id_evaluates_its_first_model_and_says_so(capsys):
    from zoo.cli import main

    # issue 15 writes `zoo eval word2vec --task embedding_quality`: a plugin id was a ModelNotFound
    assert main(["eval", "fixture", "--task", "digits_classify", "--steps", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    first = zoo.plugins()[[s.id for s in zoo.plugins()].index("fixture")].models[0]
    assert f"fixture is a plugin: evaluating its model {first} (others: " in err
    assert json.loads(out)["metrics"]["params"] == zoo.task.count_params(zoo.create(first))


def test_info_lists_builder_arguments_snapshot_and_claim(capsys):
    from zoo.cli import main

    assert main(["info", "derf_vit"]) == 0
    out = capsys.readouterr().out
    assert "depth: int = 4" in out and "claim:" in out and "zoo reproduce derf" in out
    assert main(["info", "mrl_digits_cnn"]) == 0
    assert "ships in the plugin" in capsys.readouterr().out
    assert registry.info("fixture_mlp")["arguments"][0]["name"] == "hidden"


def test_a_timm_repo_is_not_a_zoo_config_rather_than_unsafe():
    cfg = json.dumps({"architecture": "resnet18", "num_classes": 1000, "pretrained_cfg": {}}).encode()
    with pytest.raises(zoo.NotAZooConfig, match="timm.create_model") as info:
        hubformat.parse_config(cfg, "hf-hub:timm/resnet18.a1_in1k")
    assert not isinstance(info.value, zoo.UnsafeConfig)


def test_evaluate_then_save_writes_the_metrics_on_the_card(tmp_path):
    model = zoo.create("fixture_mlp")
    result = zoo.evaluate(model, steps=2)
    folder = zoo.save_pretrained(model, tmp_path / "saved")
    card = (folder / "README.md").read_text()
    assert "None recorded" not in card and f"digits_classify/accuracy | {result.metrics['accuracy']}" in card


def test_train_records_only_when_asked_and_prints_pins(hub, tmp_path, monkeypatch, capsys):
    from zoo.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "registry.yaml").write_text("version: 1\npapers: []\n")
    assert main(["train", "fixture_mlp.digits", "--push"]) == 0
    out = capsys.readouterr()
    assert (tmp_path / "registry.yaml").read_text() == "version: 1\npapers: []\n"
    assert 'pin it: WeightsSpec(repo="zoo-fixture/fixture-mlp", revision="' in out.out and '"model.safetensors": "' in out.out
    assert "training fixture_mlp.digits" in out.err and "pushed fixture_mlp.digits" in out.err
    assert main(["-q", "train", "fixture_mlp.digits"]) == 0
    assert "training" not in capsys.readouterr().err


def test_recipe_that_skips_zoo_create_is_told_how_to_fix_it(monkeypatch):
    spec, _, _ = registry.lookup("fixture_mlp")
    w = replace(spec.weights["digits"], recipe="tests.test_first_hour:_bare_recipe")
    monkeypatch.setattr(registry, "lookup", lambda name: (replace(spec, weights={"digits": w}), "fixture", "digits"))
    with pytest.raises(zoo.NotAZooModel, match="zoo.create"):
        zoo.train("fixture_mlp.digits")


def _bare_recipe(seed: int = 0):
    import torch

    return torch.nn.Linear(2, 2), {}


def test_tables_print_counts_in_full():
    from zoo.task import format_table

    text = format_table({"a": {"params": 26634.0, "steps": 600, "accuracy": 0.98123, "seconds_per_step": 0.01}})
    assert "26,634" in text and "e+04" not in text and "0.9812" in text and "one run each" in text


def test_dev_reinstalls_only_what_changed(tmp_path, monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import install_state
    finally:
        sys.path.pop(0)
    monkeypatch.setenv("VENV", str(tmp_path))
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "pyproject.toml").write_text("x")
    changed = lambda: install_state._load().get("dists", {}) and [  # noqa: E731
        d for d in (str(a), str(b)) if install_state._load()["dists"].get(d) != install_state.fingerprint(Path(d))]
    assert install_state.main(["mark", str(a), str(b)]) == 0
    assert changed() == []
    (b / "mod.py").write_text("y")
    assert changed() == [str(b)]


def test_every_shipped_snapshot_loads_offline_and_strictly():
    """Each tag whose plugin ships a snapshot loads from it (sha256 pins, strict keys and shapes): a model change
    that leaves a stale snapshot behind fails here, not on a user's first create."""
    shipped = [n for n in zoo.list_models(pretrained=True)
               if registry.lookup(n)[0].weights[n.split(".", 1)[1]].snapshot is not None]
    assert "mrl_digits_cnn.digits" in shipped
    for name in shipped:
        model = zoo.create(name)
        assert model.zoo.source == "package" and model.zoo.pretrained, name


def test_push_failures_are_one_line_and_push_nothing(hub, repo_id, monkeypatch):
    from zoo import weights

    model = zoo.create("fixture_mlp")
    # before: httpx's ConnectError / huggingface_hub's HTTP error reached the user as a traceback
    with pytest.raises(zoo.PushFailed, match="HF_TOKEN"):
        zoo.push_to_hub(model, repo_id, token="not-the-token")
    monkeypatch.setattr(weights, "hub_unreachable", lambda timeout=2.0: "ConnectionRefusedError: Connection refused")
    with pytest.raises(zoo.PushFailed, match="unreachable .*nothing was pushed"):
        zoo.push_to_hub(model, repo_id)


def test_convert_names_a_missing_checkpoint(capsys):
    from zoo.cli import main

    assert main(["convert", "mlp_kan_deit.official", "/no/such/checkpoint.pth", "--to", "out"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_push_puts_its_files_in_the_cache_without_downloading_them(hub, repo_id, monkeypatch):
    import huggingface_hub

    def no_download(*a, **k):
        raise AssertionError(f"downloaded {a} after the push")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_download)
    model = zoo.create("fixture_mlp")
    commit = zoo.push_to_hub(model, repo_id)
    r = run_py(f"import zoo; m = zoo.create('hf-hub:{repo_id}', pretrained=True); print(m.zoo.commit, m.zoo.sha256)",
               env={"HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr
    got_commit, sha = r.stdout.split()[-2:]
    assert got_commit == commit
    # the cached file is the pushed one: an online pull of the same commit agrees (and finds nothing to fetch)
    monkeypatch.undo()
    path = huggingface_hub.hf_hub_download(repo_id, "model.safetensors", revision=commit)
    assert Path(path).resolve().name == sha and zoo.weights.sha256_file(path) == sha
    assert not list(Path(path).resolve().parent.glob(".*"))  # no staged leftovers in blobs/


def test_push_hashes_the_weights_once_and_the_card_names_that_hash(hub, repo_id, monkeypatch):
    import hashlib

    import huggingface_hub

    def second_hash(*a, **k):
        raise AssertionError("the pushed weights were hashed a second time")

    monkeypatch.setattr(zoo.weights, "sha256_file", second_hash)  # the upload's own sha256 is reused
    commit = zoo.push_to_hub(zoo.create("fixture_mlp"), repo_id)
    monkeypatch.undo()
    cfg = json.loads(Path(huggingface_hub.hf_hub_download(repo_id, "config.json", revision=commit)).read_text())
    data = Path(huggingface_hub.hf_hub_download(repo_id, "model.safetensors", revision=commit)).read_bytes()
    assert cfg["weights"]["model.safetensors"]["sha256"] == hashlib.sha256(data).hexdigest()
