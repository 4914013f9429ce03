"""Weights: save/load round trips, push/pull through the local hub, pinning, integrity, safety."""
import json
import os
from pathlib import Path

import pytest
import torch

import zoo
from zoo.weights import WeightsMismatch

from .helpers import run_py

X = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(0))


def _out(model):
    with torch.no_grad():
        return model.eval()(X)


def test_fresh_model_claims_no_weights():
    m = zoo.create("fixture_mlp")
    assert m.zoo.pretrained is False and m.zoo.repo is None and m.zoo.sha256 is None and m.zoo.tag is None


def test_save_and_local_dir_round_trip(tmp_path):
    m = zoo.create("fixture_mlp", hidden=8)
    folder = zoo.save_pretrained(m, tmp_path / "m")
    assert sorted(os.listdir(folder)) == ["README.md", "config.json", "model.safetensors"]
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["model"] == "fixture_mlp" and cfg["model_args"] == {"hidden": 8}
    assert cfg["plugin"]["distribution"] == "zoo-fixture"
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True)
    assert torch.equal(_out(m), _out(loaded))
    assert loaded.zoo.pretrained and loaded.zoo.sha256 == cfg["weights"]["model.safetensors"]["sha256"]
    arch_only = zoo.create(f"local-dir:{folder}")
    assert arch_only.zoo.pretrained is False and arch_only.zoo.model_args["hidden"] == 8


def test_tied_weights_saved_once_and_restored(tmp_path):
    from safetensors import safe_open

    m = zoo.create("fixture_tied")
    folder = zoo.save_pretrained(m, tmp_path / "t")
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert len({"proj.weight", "proj2.weight"} & keys) == 1
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True)
    assert loaded.proj.weight is loaded.proj2.weight
    assert torch.equal(_out(m), _out(loaded))


def test_non_json_argument_is_named(tmp_path):
    m = zoo.create("fixture_mlp", extra=torch.nn.ReLU())
    with pytest.raises(ValueError, match="'extra'"):
        zoo.save_pretrained(m, tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_existing_card_kept_unless_overwrite(tmp_path):
    m = zoo.create("fixture_mlp")
    folder = zoo.save_pretrained(m, tmp_path / "c")
    (folder / "README.md").write_text("my edited card")
    zoo.save_pretrained(m, folder)
    assert (folder / "README.md").read_text() == "my edited card"
    zoo.save_pretrained(m, folder, overwrite_card=True)
    assert "Load with zoo" in (folder / "README.md").read_text()


def test_strict_loading_lists_keys(tmp_path):
    folder = zoo.save_pretrained(zoo.create("fixture_mlp", hidden=8), tmp_path / "s")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["model"] = "fixture_tied"
    cfg["model_args"] = {}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(WeightsMismatch, match=r"missing keys \['head.bias'"):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_corrupt_local_file_is_never_loaded(tmp_path):
    folder = zoo.save_pretrained(zoo.create("fixture_mlp"), tmp_path / "k")
    data = bytearray((folder / "model.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (folder / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(zoo.WeightsCorrupt, match="sha256"):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_pickle_refused_unless_allowed(tmp_path):
    m = zoo.create("fixture_mlp")
    folder = zoo.save_pretrained(m, tmp_path / "p")
    torch.save(m.state_dict(), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    cfg = json.loads((folder / "config.json").read_text())
    cfg["weights"] = {}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.WeightsCorrupt, match="pickle"):
        zoo.create(f"local-dir:{folder}", pretrained=True)
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True, allow_pickle=True)
    assert torch.equal(_out(m), _out(loaded))


@pytest.mark.parametrize("patch, message", [
    ({"builder": "os:system"}, "never name a builder"),
    ({"model": "os:system"}, "registered model name"),
    ({"model": "no_such_model"}, "not installed"),
    ({"plugin": {"distribution": "zoo-evil", "requirement": "zoo-evil; rm -rf /"}}, "plain"),
    ({"zoo_format_version": 99}, "not supported"),
])
def test_hostile_config_refused(tmp_path, patch, message):
    folder = zoo.save_pretrained(zoo.create("fixture_mlp"), tmp_path / "h")
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(patch)
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises((zoo.UnsafeConfig, zoo.PluginNotInstalled), match=message):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_config_from_other_plugin_refused(tmp_path):
    folder = zoo.save_pretrained(zoo.create("fixture_mlp"), tmp_path / "o")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["plugin"] = {"id": "other", "distribution": "zoo-other", "requirement": "zoo-other"}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.UnsafeConfig, match="another plugin"):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_config_args_checked_against_builder(tmp_path):
    folder = zoo.save_pretrained(zoo.create("fixture_mlp"), tmp_path / "a")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["model_args"] = {"__class__": 1}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.errors.UnknownArgument, match=r"unknown argument\(s\) \['__class__'\] in local-dir:"):
        zoo.create(f"local-dir:{folder}")
    cfg["model_args"] = {"hidden": "16"}  # a string where the builder's annotation says int
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.errors.UnknownArgument, match=r"argument hidden='16' in local-dir:.* must be int, got str"):
        zoo.create(f"local-dir:{folder}")


@pytest.mark.parametrize("revision, pinned", [("a" * 40, True), ("a" * 40 + "\n", False), ("A" * 40, False),
                                              ("main", False), ("a" * 39, False)])
def test_only_a_full_commit_id_pins(revision, pinned):
    from zoo.ids import is_commit

    assert is_commit(revision) is pinned
    files = {"model.safetensors": "0" * 64} if pinned else {}
    assert zoo.WeightsSpec(repo="org/name", revision=revision, files=files).pinned is pinned


@pytest.mark.parametrize("name", ["net\n", "Net", "_net", "net.tag", "net/x", ""])
def test_model_names_are_checked_whole(name):
    with pytest.raises(ValueError, match="must be lowercase"):
        zoo.ModelSpec(name=name, builder="zoo_x.model:build")


# ---- through the local hub ----------------------------------------------------------------

def test_push_and_pull_bit_identical(hub, repo_id):
    m = zoo.create("fixture_mlp", hidden=12)
    commit = zoo.push_to_hub(m, repo_id, metrics={"accuracy": 0.5})
    assert len(commit) == 40
    pulled = zoo.create(f"hf-hub:{repo_id}", pretrained=True)
    assert torch.equal(_out(m), _out(pulled))
    assert pulled.zoo.commit == commit and pulled.zoo.repo == repo_id and pulled.zoo.source == "hf-hub"
    from huggingface_hub import hf_hub_download

    card = Path(hf_hub_download(repo_id, "README.md", revision=commit)).read_text()
    assert "library_name: zoo" in card and "| accuracy | 0.5 |" in card and f"hf-hub:{repo_id}" in card


def test_pull_is_pinned_to_one_commit(hub, repo_id):
    a = zoo.create("fixture_mlp")
    c1 = zoo.push_to_hub(a, repo_id)
    torch.manual_seed(1)
    b = zoo.create("fixture_mlp")
    c2 = zoo.push_to_hub(b, repo_id)
    assert c1 != c2
    old = zoo.create(f"hf-hub:{repo_id}@{c1}", pretrained=True)
    new = zoo.create(f"hf-hub:{repo_id}", pretrained=True)
    assert torch.equal(_out(old), _out(a)) and torch.equal(_out(new), _out(b))
    assert old.zoo.commit == c1 and new.zoo.commit == c2


def test_push_keeps_edited_card(hub, repo_id):
    from huggingface_hub import HfApi, hf_hub_download

    m = zoo.create("fixture_mlp")
    zoo.push_to_hub(m, repo_id)
    HfApi().upload_file(path_or_fileobj=b"edited by a human", path_in_repo="README.md", repo_id=repo_id)
    zoo.push_to_hub(m, repo_id, commit_message="again")
    assert Path(hf_hub_download(repo_id, "README.md")).read_bytes() == b"edited by a human"


OFFLINE = '''
import sys, torch, zoo
m = zoo.create(sys.argv[1] if len(sys.argv) > 1 else "hf-hub:{repo}", pretrained=True)
x = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    torch.save(m.eval()(x), "{out}")
print(m.zoo.commit)
'''


def test_offline_new_process_dead_endpoint(hub, repo_id, tmp_path):
    m = zoo.create("fixture_mlp")
    commit = zoo.push_to_hub(m, repo_id)
    zoo.create(f"hf-hub:{repo_id}", pretrained=True)  # fills the cache
    out = tmp_path / "out.pt"
    r = run_py(OFFLINE.format(repo=repo_id, out=out),
               env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == commit
    assert torch.equal(torch.load(out), _out(m))


def test_offline_with_nothing_cached_fails_fast_with_fix(hub, repo_id):
    r = run_py(f"import zoo; zoo.create('hf-hub:{repo_id}', pretrained=True)",
               env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode != 0
    assert "WeightsNotFound" in r.stderr and "config.json" in r.stderr and "HF_ENDPOINT" in r.stderr


def _cached_weights(repo_id, commit):
    from huggingface_hub import try_to_load_from_cache

    return Path(try_to_load_from_cache(repo_id, "model.safetensors", revision=commit))


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_cache_detected_and_not_poisoning(hub, repo_id, damage):
    m = zoo.create("fixture_mlp")
    commit = zoo.push_to_hub(m, repo_id)
    zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    blob = _cached_weights(repo_id, commit).resolve()
    data = blob.read_bytes()
    blob.write_bytes(data[:-7] if damage == "truncate" else data[:-1] + bytes([data[-1] ^ 1]))
    # offline: detected, not loaded, evicted
    r = run_py(f"import zoo; zoo.create('hf-hub:{repo_id}@{commit}', pretrained=True)",
               env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode != 0 and "WeightsCorrupt" in r.stderr
    assert not blob.exists()
    # online again: downloaded afresh and loads
    again = zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    assert torch.equal(_out(again), _out(m))


def test_corrupt_cache_online_is_repaired(hub, repo_id):
    m = zoo.create("fixture_mlp")
    commit = zoo.push_to_hub(m, repo_id)
    zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    blob = _cached_weights(repo_id, commit).resolve()
    blob.write_bytes(b"\0" * blob.stat().st_size)
    again = zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    assert torch.equal(_out(again), _out(m))


def test_registry_tag_resolves_through_hub(hub):
    from zoo.cli import main

    assert main(["train", "fixture_mlp.digits", "--push"]) == 0
    m = zoo.create("fixture_mlp.digits")
    assert m.zoo.pretrained and m.zoo.tag == "digits" and m.zoo.repo == "zoo-fixture/fixture-mlp"
    assert m.zoo.id == "fixture_mlp.digits" and len(m.zoo.commit) == 40
    same = zoo.create("fixture_mlp", pretrained=True)
    assert torch.equal(_out(m), _out(same))


def test_no_weights_is_clear():
    with pytest.raises(zoo.WeightsNotFound, match="no pretrained weights"):
        zoo.create("fixture_tied", pretrained=True)


def test_pretrained_build_skips_the_random_init_the_weights_overwrite(tmp_path):
    folder = zoo.save_pretrained(zoo.create("fixture_mlp", hidden=32), tmp_path / "m")
    torch.manual_seed(0)
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True)
    after_load = torch.rand(3)
    torch.manual_seed(0)
    zoo.create(f"local-dir:{folder}")  # architecture only: initialised as usual, drawing from the global generator
    after_build = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(after_load, torch.rand(3))  # no random number was drawn for weights the load replaced
    assert not torch.equal(after_build, after_load)
    assert torch.equal(_out(loaded), _out(zoo.create(f"local-dir:{folder}", pretrained=True)))


def test_pretrained_build_keeps_the_init_of_tensors_the_weights_do_not_hold(tmp_path):
    m = zoo.create("fixture_fixed_projection", seed=3)
    folder = zoo.save_pretrained(m, tmp_path / "p")
    assert "proj" not in m.state_dict()  # a non-persistent buffer: only its initialisation can restore it
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True)
    assert torch.equal(loaded.proj, m.proj) and torch.equal(_out(loaded), _out(m))


def test_skipping_init_on_one_thread_leaves_other_threads_initialising():
    import threading

    from zoo.factory import _SkipInit

    inside, done, built = threading.Event(), threading.Event(), {}

    def other():
        inside.wait()
        torch.manual_seed(0)
        built["w"] = torch.nn.Linear(16, 16).weight.detach().clone()
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with _SkipInit.active() as skipped:
        skipped_layer = torch.nn.Linear(16, 16)
        inside.set()
        done.wait(10)
    t.join()
    assert any(s is skipped_layer.weight for s in skipped)
    torch.manual_seed(0)
    assert torch.equal(built["w"], torch.nn.Linear(16, 16).weight)  # the other thread's layer was initialised
    assert torch.nn.init.kaiming_uniform_.__name__ == "kaiming_uniform_" and not hasattr(
        torch.nn.init.kaiming_uniform_, "__wrapped__")  # the wrappers are gone after the block
