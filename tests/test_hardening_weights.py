"""Issue 12, weights and untrusted sizes: each attack run for real (files, processes, the local hub on 127.0.0.1).

The bytes loaded are the bytes hashed; no marker can be forged; a vanished cache entry is fetched again;
dtypes and finiteness are checked; revisions are checked before any Hub call; a cached config.json is held
to its commit; a config.json's model_args are sized on the meta device before anything is allocated.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

import zoo
from zoo import weights

from .helpers import run_py

X = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(0))


def _out(model):
    with torch.no_grad():
        return model.eval()(X)


def _saved(tmp_path, name="m", **args):
    torch.manual_seed(0)
    model = zoo.create("fixture_mlp", **args)
    return model, zoo.save_pretrained(model, tmp_path / name)


def _set_weights(folder: Path, state: dict) -> None:
    """Write ``state`` as the folder's weights, with config.json's sha256 updated (an attacker controls both)."""
    save_file(state, str(folder / "model.safetensors"))
    cfg = json.loads((folder / "config.json").read_text())
    cfg["weights"]["model.safetensors"]["sha256"] = weights.sha256_file(folder / "model.safetensors")
    (folder / "config.json").write_text(json.dumps(cfg))


def _set_args(folder: Path, args: dict) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    cfg["model_args"] = args
    (folder / "config.json").write_text(json.dumps(cfg))


def _cached(repo_id, commit, name):
    from huggingface_hub import try_to_load_from_cache

    return Path(try_to_load_from_cache(repo_id, name, revision=commit)).resolve()


def _other_weights(like) -> bytes:
    """A valid safetensors file of the same keys, shapes and size, other values: what an in-place edit writes."""
    from safetensors.torch import save

    return save({k: torch.full_like(v, 0.25) for k, v in like.state_dict().items()}, metadata={"format": "pt"})


# ---- the bytes hashed are the bytes loaded -----------------------------------------------------------------

def test_in_place_edit_with_mtime_restored_is_never_loaded(hub, repo_id):
    m = zoo.create("fixture_mlp")
    commit = zoo.push_to_hub(m, repo_id)
    zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)  # verified once: the old code left a marker
    blob = _cached(repo_id, commit, "model.safetensors")
    st, evil = blob.stat(), _other_weights(m)
    assert len(evil) == st.st_size
    with open(blob, "r+b") as f:  # same inode, same size
        f.write(evil)
    os.utime(blob, ns=(st.st_atime_ns, st.st_mtime_ns))
    # offline: refused, whatever the marker says
    r = run_py(f"import zoo; zoo.create('hf-hub:{repo_id}@{commit}', pretrained=True)",
               env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode != 0 and "WeightsCorrupt" in r.stderr, r.stderr[-2000:]
    # the corrupt copy was evicted; online, the real weights come back
    with open(blob.parent.parent / "snapshots" / commit / "model.safetensors", "wb") as f:
        f.write(evil)  # planted again, as a plain file this time
    again = zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    assert torch.equal(_out(again), _out(m)) and again.zoo.sha256 == weights.sha256_file(
        _cached(repo_id, commit, "model.safetensors"))


def test_a_pinned_load_reads_the_file_once_and_loads_those_bytes(tmp_path, monkeypatch):
    m, folder = _saved(tmp_path)
    reads = []
    real_read = weights.read_file_checked

    def read_then_swap(path):
        data = real_read(path)
        reads.append(path)
        # what a concurrent writer does right after the check: the loader must not look at the file again
        (folder / "model.safetensors").write_bytes(_other_weights(m))
        return data

    monkeypatch.setattr(weights, "read_file_checked", read_then_swap)
    monkeypatch.setattr("safetensors.torch.load_file", lambda *a, **k: pytest.fail("the file was read a second time"))
    loaded = zoo.create(f"local-dir:{folder}", pretrained=True)
    assert len(reads) == 1 and torch.equal(_out(loaded), _out(m))


_SWAPPER = """
import os, sys, time
target, good, evil, stop = sys.argv[1:5]
deadline = time.monotonic() + 20
i = 0
while not os.path.exists(stop) and time.monotonic() < deadline:
    src = evil if i % 2 else good
    tmp = target + ".swap"
    with open(src, "rb") as f, open(tmp, "wb") as g:
        g.write(f.read())
    os.replace(tmp, target)
    i += 1
with open(good, "rb") as f, open(target + ".swap", "wb") as g:
    g.write(f.read())
os.replace(target + ".swap", target)  # ends on the good file
"""


def test_loads_under_a_concurrent_swapper_never_return_other_weights(tmp_path):
    """A real second process swaps the file between the good and another valid file as fast as it can."""
    m, folder = _saved(tmp_path, hidden=64)
    target = folder / "model.safetensors"
    good, evil = tmp_path / "good", tmp_path / "evil"
    good.write_bytes(target.read_bytes())
    evil.write_bytes(_other_weights(m))
    stop = tmp_path / "stop"
    swapper = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(target), str(good), str(evil), str(stop)])
    ok = refused = 0
    try:
        end = time.monotonic() + 4
        while time.monotonic() < end and ok + refused < 200:
            try:
                loaded = zoo.create(f"local-dir:{folder}", pretrained=True)
            except (zoo.WeightsCorrupt, zoo.WeightsNotFound):
                refused += 1
                continue
            assert torch.equal(_out(loaded), _out(m)), "weights other than the verified ones were loaded"
            ok += 1
    finally:
        stop.touch()
        swapper.wait(timeout=30)
    assert ok + refused >= 5, (ok, refused)  # loads ran while the file was being swapped
    assert torch.equal(_out(zoo.create(f"local-dir:{folder}", pretrained=True)), _out(m))


def test_a_copy_evicted_by_another_process_is_fetched_again(hub, repo_id, monkeypatch):
    m = zoo.create("fixture_mlp")
    commit = zoo.push_to_hub(m, repo_id)
    zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    blob = _cached(repo_id, commit, "model.safetensors")
    real_read, calls = weights.read_file_checked, []

    def evicted_first(path):
        calls.append(path)
        if len(calls) == 1 and Path(path).name == "model.safetensors":
            # another process found its copy corrupt and evicted it, between our lookup and our read
            r = run_py(f"from zoo.weights import evict; evict({str(path)!r})")
            assert r.returncode == 0, r.stderr
        return real_read(path)

    monkeypatch.setattr(weights, "read_file_checked", evicted_first)
    again = zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    assert torch.equal(_out(again), _out(m)) and blob.exists() and len(calls) == 2


def test_eviction_leaves_a_copy_downloaded_afresh_alone(tmp_path):
    f = tmp_path / "blob"
    f.write_bytes(b"bad")
    _, inode = weights.read_file(f)
    (tmp_path / "new").write_bytes(b"good")
    os.replace(tmp_path / "new", f)  # another process downloaded a good copy meanwhile (a new inode)
    weights.evict(f, only=inode)
    assert f.read_bytes() == b"good"
    weights.evict(f, only=weights.read_file(f)[1])
    assert not f.exists()


# ---- dtypes and finiteness ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int8, torch.bool, torch.bfloat16])
def test_other_dtypes_are_refused_unless_cast(tmp_path, dtype):
    m, folder = _saved(tmp_path)
    _set_weights(folder, {k: v.to(dtype) for k, v in m.state_dict().items()})
    name = str(dtype).removeprefix("torch.")
    with pytest.raises(zoo.WeightsMismatch, match=rf"dtype mismatch for 1.weight {name} vs float32.*cast_weights=True"):
        zoo.create(f"local-dir:{folder}", pretrained=True)
    cast = zoo.create(f"local-dir:{folder}", pretrained=True, cast_weights=True)
    assert cast.zoo.pretrained and all(p.dtype == torch.float32 for p in cast.parameters())
    if dtype in (torch.float64, torch.float16, torch.bfloat16):
        assert torch.allclose(_out(cast), _out(m), atol=0.05)


@pytest.mark.parametrize("value, message", [(float("nan"), "NaN"), (float("inf"), "infinite")])
def test_non_finite_weights_are_refused(tmp_path, value, message):
    m, folder = _saved(tmp_path)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    state["3.bias"][1] = value
    _set_weights(folder, state)
    for cast in (False, True):
        with pytest.raises(zoo.WeightsCorrupt, match=rf"3\.bias holds .*{message}"):
            zoo.create(f"local-dir:{folder}", pretrained=True, cast_weights=cast)
    _set_weights(folder, {k: torch.full_like(v, float("nan")) for k, v in m.state_dict().items()})
    with pytest.raises(zoo.WeightsCorrupt, match="NaN"):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_float64_out_of_float32_range_is_refused_even_when_cast(tmp_path):
    m, folder = _saved(tmp_path)
    state = {k: v.double() for k, v in m.state_dict().items()}
    state["1.bias"][0] = 1e300  # finite in float64, infinite once cast
    _set_weights(folder, state)
    with pytest.raises(zoo.WeightsCorrupt, match="infinite"):
        zoo.create(f"local-dir:{folder}", pretrained=True, cast_weights=True)


@pytest.mark.parametrize("header, message", [
    ({"1.weight": {"dtype": "F32", "shape": [16, 64], "data_offsets": [0, 99]}}, "claims bytes"),
    ({"1.weight": {"dtype": "X9", "shape": [1], "data_offsets": [0, 4]}}, "malformed or unsupported"),
    ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, "overlap or leave a gap"),
])
def test_malformed_tensor_entries_are_refused(tmp_path, header, message):
    _, folder = _saved(tmp_path)
    raw = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(len(raw).to_bytes(8, "little") + raw + b"\0" * 8)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["weights"]["model.safetensors"]["sha256"] = weights.sha256_file(folder / "model.safetensors")
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.WeightsCorrupt, match=message):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_own_reader_matches_safetensors(tmp_path):
    from safetensors.torch import load_file

    state = {"a": torch.randn(3, 5), "b": torch.arange(7, dtype=torch.int64), "c": torch.ones(2, dtype=torch.float16),
             "d": torch.zeros(0, 4), "e": torch.tensor([True, False]), "f": torch.randn(2, 2, dtype=torch.bfloat16)}
    save_file(state, str(tmp_path / "w.safetensors"))
    ours, theirs = weights.read_state_dict(tmp_path / "w.safetensors"), load_file(str(tmp_path / "w.safetensors"))
    assert ours.keys() == theirs.keys()
    for k in ours:
        assert ours[k].dtype == theirs[k].dtype and torch.equal(ours[k], theirs[k]), k


# ---- revisions and config.json --------------------------------------------------------------------------

@pytest.mark.parametrize("revision", ["../../x", "main/../../../x", "a//b", "/etc", "x/", ".hidden", "a.lock", "-x",
                                      "a\nb", "a b", "x" * 300, "refs/heads/..", "a/."])
def test_bad_revisions_are_refused_before_any_hub_call(hub, repo_id, revision, monkeypatch):
    import huggingface_hub

    root = Path(os.environ["HF_HUB_CACHE"]).parent
    before = {p for p in root.rglob("*")}
    for fn in ("hf_hub_download", "try_to_load_from_cache"):
        monkeypatch.setattr(huggingface_hub, fn, lambda *a, **k: pytest.fail("huggingface_hub was called"))
    with pytest.raises((zoo.WeightsNotFound, zoo.ModelNotFound)):  # a newline already fails the name's own check
        zoo.create(f"hf-hub:{repo_id}@{revision}")
    with pytest.raises(zoo.WeightsNotFound, match="is not a commit id, branch, tag"):
        weights.fetch(repo_id, revision, {"config.json": None})
    assert {p for p in root.rglob("*")} == before


def test_dotdot_revision_writes_nothing_outside_the_cache(hub, repo_id, tmp_path):
    """In a fresh process, against the real local hub, with the real client: nothing anywhere changes."""
    m = zoo.create("fixture_mlp")
    zoo.push_to_hub(m, repo_id)
    cache = tmp_path / "cache"
    r = run_py(f"import zoo; zoo.create('hf-hub:{repo_id}@../../../escaped')",
               env={"HF_HUB_CACHE": str(cache), "ZOO_CACHE_DIR": str(tmp_path / "zc")})
    assert "WeightsNotFound" in r.stderr and "is not a commit id" in r.stderr, r.stderr[-2000:]
    assert not list(tmp_path.rglob("escaped")) and not cache.exists()


@pytest.mark.parametrize("revision", ["main", "v1.0", "refs/pr/1", "a" * 40, "feature/x-y_z+1"])
def test_good_revisions_pass(revision):
    assert weights.check_revision(revision) == revision


def test_cached_config_is_held_to_its_commit(hub, repo_id):
    m = zoo.create("fixture_mlp", hidden=12)
    commit = zoo.push_to_hub(m, repo_id)
    assert zoo.create(f"hf-hub:{repo_id}@{commit}").zoo.model_args["hidden"] == 12
    blob = _cached(repo_id, commit, "config.json")
    assert len(blob.name) == 40  # a regular file: the blob is named by its git sha1
    text = blob.read_text()
    assert '"hidden": 12' in text
    blob.write_text(text.replace('"hidden": 12', '"hidden": 99'))
    r = run_py(f"import zoo; zoo.create('hf-hub:{repo_id}@{commit}')",
               env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"})
    assert r.returncode != 0 and "WeightsCorrupt" in r.stderr and "config.json" in r.stderr, r.stderr[-2000:]
    assert not blob.exists()  # evicted; online it comes back as pushed
    assert zoo.create(f"hf-hub:{repo_id}@{commit}").zoo.model_args["hidden"] == 12


# ---- untrusted model_args --------------------------------------------------------------------------------

def test_huge_model_args_fail_fast_without_allocating(tmp_path):
    _, folder = _saved(tmp_path)
    _set_args(folder, {"hidden": 10**12})  # 64e12 parameters: 256 TB in float32
    t0 = time.perf_counter()
    with pytest.raises(zoo.UnsafeConfig, match=r"hidden=1000000000000.*ZOO_MAX_PARAMS.*before allocating"):
        zoo.create(f"local-dir:{folder}", pretrained=True)
    assert time.perf_counter() - t0 < 5


def test_limits_are_configurable(tmp_path, monkeypatch):
    _, folder = _saved(tmp_path)
    _set_args(folder, {"hidden": 16})  # 1,210 parameters, 4 modules
    monkeypatch.setenv("ZOO_MAX_PARAMS", "1000")
    with pytest.raises(zoo.UnsafeConfig, match="1,000 parameter and buffer elements"):
        zoo.create(f"local-dir:{folder}")
    monkeypatch.setenv("ZOO_MAX_PARAMS", "1e4")
    assert zoo.create(f"local-dir:{folder}", pretrained=True).zoo.pretrained
    monkeypatch.setenv("ZOO_MAX_MODULES", "3")
    with pytest.raises(zoo.UnsafeConfig, match="3 modules.*ZOO_MAX_MODULES"):
        zoo.create(f"local-dir:{folder}")
    # the caller's own arguments are theirs: not bounded
    assert zoo.create("fixture_mlp", hidden=64).zoo.model_args["hidden"] == 64


def test_a_limit_a_builder_swallows_still_holds(tmp_path, monkeypatch):
    from zoo import factory

    def greedy(**kw):
        try:
            return torch.nn.Linear(10**6, 10**6)
        except Exception:  # noqa: BLE001 - a hostile or careless builder
            return torch.nn.Linear(10**6, 10**6)

    with pytest.raises(factory._OverBudget):
        factory._bounded_call(greedy, {}, 1000, meta=True)


def test_builder_errors_name_the_argument(tmp_path):
    _, folder = _saved(tmp_path)
    _set_args(folder, {"hidden": -1, "act": "tanh"})
    with pytest.raises(zoo.errors.UnknownArgument, match=r"argument hidden=-1 in local-dir:.*RuntimeError.*negative"):
        zoo.create(f"local-dir:{folder}")


def test_the_meta_build_does_not_change_the_real_one(tmp_path):
    _, folder = _saved(tmp_path)
    _set_args(folder, {"hidden": 8})
    torch.manual_seed(3)
    from_config = zoo.create(f"local-dir:{folder}")
    torch.manual_seed(3)
    direct = zoo.create("fixture_mlp", hidden=8)
    assert all(torch.equal(a, b) for a, b in zip(from_config.state_dict().values(), direct.state_dict().values(), strict=True))
    assert all(p.device.type == "cpu" for p in from_config.parameters())


def test_concurrent_bounded_builds_do_not_count_each_other():
    import threading

    from zoo import factory
    from zoo_fixture.model import mlp

    exact = sum(t.numel() for t in mlp().state_dict().values())  # 1,210
    errors = []

    def build():
        try:
            for _ in range(20):
                _, seen = factory._bounded_call(mlp, {}, exact, meta=True)
                assert seen == exact
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    with pytest.raises(factory._OverBudget):
        factory._bounded_call(mlp, {}, exact - 1, meta=True)


def test_background_fetch_hands_back_its_result_or_its_error():
    from zoo.factory import _in_background

    assert _in_background(lambda a, b: a + b, 2, 3)() == 5

    def fails():
        raise zoo.WeightsCorrupt("bad bytes")

    with pytest.raises(zoo.WeightsCorrupt, match="bad bytes"):
        _in_background(fails)()


def test_a_verified_file_is_not_hashed_again_until_it_changes_even_with_its_mtime_restored(tmp_path, monkeypatch):
    """The marker names the file's identity with its ctime, which an in-place edit cannot restore."""
    import hashlib
    import os

    f = tmp_path / "w.bin"
    f.write_bytes(b"a" * 1000)
    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    calls = []
    real = hashlib.sha256
    # count the hashes of the file's bytes (the marker's own name is a sha256 of a short key)
    monkeypatch.setattr(hashlib, "sha256", lambda *a: (calls.append(1) if a and len(a[0]) == 1000 else None) or real(*a))
    weights.read_verified(f, digest)
    weights.read_verified(f, digest)
    assert len(calls) == 1  # the second load of the unchanged file trusts the marker
    st = f.stat()
    with open(f, "r+b") as h:  # in place, same size, then the mtime put back
        h.write(b"b")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(zoo.WeightsCorrupt):
        weights.read_verified(f, digest)


def test_complex_weights_load_as_the_spectral_layers_of_neural_operators_store_them():
    """FNO-style layers keep complex64 parameters; safetensors writes them as C64 and a load must take them."""
    import safetensors.torch

    from zoo import weights

    w = torch.randn(3, 2, dtype=torch.complex64)
    parsed = weights._parse_safetensors(bytearray(safetensors.torch.save({"w": w})), "test")
    assert torch.equal(parsed["w"], w)
