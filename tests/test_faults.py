"""Faults, concurrency and hostile input: each ends with a clear error, nothing half-written, and a
retry that then succeeds."""
import dataclasses
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

import zoo
from zoo.hubserver.wire import HubRequestHandler

from .helpers import run_py

X = torch.rand(5, 1, 8, 8, generator=torch.Generator().manual_seed(0))


def _out(model):
    with torch.no_grad():
        return model.eval()(X)


def _cached(repo_id, commit, name="model.safetensors"):
    from huggingface_hub import try_to_load_from_cache

    return try_to_load_from_cache(repo_id, name, revision=commit)


# ---- transfers cut short ----------------------------------------------------------------------

def test_download_cut_mid_file_then_retry(hub, repo_id, monkeypatch, tmp_path):
    m = zoo.create("fixture_mlp", hidden=256)
    commit = zoo.push_to_hub(m, repo_id, fill_cache=False)  # the download below is the first
    original = HubRequestHandler._send

    def cut(self, r):
        if r.file is not None and self.command == "GET" and r.length > 10_000:
            half = tmp_path / "half"
            half.write_bytes(Path(r.file).read_bytes()[: r.length // 2])
            r = dataclasses.replace(r, file=half, offset=0)  # headers promise the full length
        return original(self, r)

    monkeypatch.setattr(HubRequestHandler, "_send", cut)
    with pytest.raises(zoo.DownloadFailed, match="run the same call again"):
        zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    assert not isinstance(_cached(repo_id, commit), str)  # no partial file in the snapshot
    monkeypatch.setattr(HubRequestHandler, "_send", original)
    again = zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True)
    assert torch.equal(_out(again), _out(m))


def test_full_disk_while_saving_leaves_nothing(tmp_path, monkeypatch):
    import safetensors.torch

    m = zoo.create("fixture_mlp")
    target = tmp_path / "saved"
    zoo.save_pretrained(m, target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", no_space)
    torch.manual_seed(5)
    with pytest.raises(OSError, match="No space left"):
        zoo.save_pretrained(zoo.create("fixture_mlp"), target)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before  # the old save is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved"]  # no temp folders left
    monkeypatch.undo()
    zoo.save_pretrained(m, tmp_path / "retry")
    assert zoo.create(f"local-dir:{tmp_path / 'retry'}", pretrained=True).zoo.pretrained


FULL_DISK = """
import json, resource, signal, zoo
from huggingface_hub import try_to_load_from_cache
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails with EFBIG instead of killing us
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, hard))  # no file this process writes can grow past the limit
out = {{}}
try:
    zoo.create("hf-hub:{repo}@{commit}", pretrained=True)
    out["first"] = "loaded"
except zoo.DownloadFailed as e:
    out["first"] = str(e)
out["cached"] = isinstance(try_to_load_from_cache("{repo}", "model.safetensors", revision="{commit}"), str)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # room on the disk again
out["retry"] = zoo.create("hf-hub:{repo}@{commit}", pretrained=True).zoo.sha256
print(json.dumps(out))
"""


def test_full_disk_while_downloading_leaves_no_cache_entry(hub, repo_id, tmp_path):
    """A real write failure (a file size limit, like a full disk) while the weights download: DownloadFailed,
    no cache entry, and the retry with room again succeeds."""
    pytest.importorskip("resource")
    m = zoo.create("fixture_mlp", hidden=512)  # about 150 kB of weights, far past the 64 kB limit
    commit = zoo.push_to_hub(m, repo_id)
    r = run_py(FULL_DISK.format(limit=64 * 1024, repo=repo_id, commit=commit),
               env={"HF_HUB_CACHE": str(tmp_path / "cache"), "ZOO_CACHE_DIR": str(tmp_path / "zoo-cache")})
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "File too large" in out["first"] and "run the same call again" in out["first"], out["first"]
    assert out["cached"] is False
    assert out["retry"] == zoo.create(f"hf-hub:{repo_id}@{commit}", pretrained=True).zoo.sha256


ATOMIC_PAST_LIMIT = """
import resource, signal, sys
from zoo.fileio import atomic_write_bytes
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    atomic_write_bytes(sys.argv[1], b"new" * 10_000)
except OSError as e:
    print(e.errno)
"""


def test_atomic_write_cut_by_a_write_error_keeps_the_old_file(tmp_path):
    pytest.importorskip("resource")
    target = tmp_path / "registry.yaml"
    target.write_bytes(b"old content\n")
    r = subprocess.run([sys.executable, "-c", ATOMIC_PAST_LIMIT, str(target)], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == str(errno.EFBIG), r.stdout + r.stderr
    assert target.read_bytes() == b"old content\n"
    assert os.listdir(tmp_path) == ["registry.yaml"]  # the temp file is gone


def test_atomic_write_raising_inside_keeps_the_old_file_and_umask_permissions(tmp_path):
    from zoo.fileio import atomic_path, atomic_write_text, atomic_writer

    target = tmp_path / "sub" / "file.txt"
    atomic_write_text(target, "first\n")
    mask = os.umask(0o022)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask  # like open(), not mkstemp's 0o600
    with pytest.raises(RuntimeError, match="stop"), atomic_writer(target) as f:
        f.write(b"half")
        raise RuntimeError("stop")
    with pytest.raises(RuntimeError, match="stop"), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("stop")
    assert target.read_text() == "first\n" and os.listdir(target.parent) == ["file.txt"]
    hub_tmp = tmp_path / "tmp"  # the hub writes through a temp folder of its own, on the same file system
    hub_tmp.mkdir()
    atomic_write_text(target, "second\n", tmp_dir=hub_tmp)
    assert target.read_text() == "second\n" and os.listdir(hub_tmp) == []


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(root, port, token):
    proc = subprocess.Popen([sys.executable, "-m", "zoo.hubserver", "--root", str(root), "--port", str(port),
                             "--token", token], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    return proc


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except FileNotFoundError:  # moved into place meanwhile
        return 0


def test_hub_killed_during_push_then_retry(tmp_path):
    """A big push is cut by SIGKILL of the hub: no commit appears; after a restart the retry lands."""
    port, token, root = _free_port(), "kill-token", tmp_path / "hub"
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_TOKEN": token, "HF_HUB_CACHE": str(tmp_path / "cache"),
           "HF_HOME": str(tmp_path / "home")}
    push = ("import zoo, torch; torch.manual_seed(0); m = zoo.create('fixture_mlp', hidden=200000); "
            "print(zoo.push_to_hub(m, 'crash/big'))")
    server = _serve(root, port, token)
    try:
        pusher = subprocess.Popen([sys.executable, "-c", push], env={**os.environ, **env},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        # wait until the 51 MB LFS upload is streaming into the hub's tmp/: only it grows past 1 MB there (the
        # repo's small JSON files pass through tmp/ too, and a kill during create_repo would leave no repo)
        while time.time() < deadline:
            if any(_size(p) > 1 << 20 for p in (root / "tmp").glob("*")):
                break
            time.sleep(0.005)
        else:
            pytest.fail("the upload never started")
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        _, err = pusher.communicate(timeout=120)
        assert pusher.returncode != 0
        assert "Error" in err
    finally:
        if server.poll() is None:
            server.kill()
    server = _serve(root, port, token)  # restart on the same root: no half-applied commit is visible
    try:
        r = run_py("from huggingface_hub import HfApi\n"
                   "try:\n    print(len(HfApi().list_repo_commits('crash/big')))\n"
                   "except Exception as e:\n    print(type(e).__name__)", env=env)
        # push_to_hub created the repo before the upload was cut: it holds its initial commit and nothing more
        assert r.stdout.strip() == "1", r.stdout + r.stderr
        r = run_py(push, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        commit = r.stdout.strip().splitlines()[-1]
        r = run_py(f"import zoo; m = zoo.create('hf-hub:crash/big@{commit}', pretrained=True); print(m.zoo.commit)",
                   env=env, timeout=300)
        assert r.returncode == 0 and r.stdout.strip().endswith(commit), r.stderr[-2000:]
    finally:
        server.terminate()
        server.wait(10)


# ---- concurrency ------------------------------------------------------------------------------

CREATE = """
import hashlib, torch, zoo
m = zoo.create("hf-hub:{repo}@{commit}", pretrained=True)
print(hashlib.sha256(b"".join(t.numpy().tobytes() for t in m.state_dict().values())).hexdigest())
"""


def test_eight_processes_fill_one_empty_cache(hub, repo_id, tmp_path):
    m = zoo.create("fixture_mlp", hidden=512)
    commit = zoo.push_to_hub(m, repo_id)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "shared-cache"), "ZOO_CACHE_DIR": str(tmp_path / "zc"),
           "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", CREATE.format(repo=repo_id, commit=commit)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e[-500:] for _, e in outs]
    digests = {o.strip().splitlines()[-1] for o, _ in outs}
    import hashlib

    assert digests == {hashlib.sha256(b"".join(t.numpy().tobytes() for t in m.state_dict().values())).hexdigest()}


def test_concurrent_pushes_lose_nothing(hub, repo_id):
    models = []
    for i in range(8):
        torch.manual_seed(100 + i)
        models.append(zoo.create("fixture_mlp"))
    results: dict = {}

    def push(i, repo):
        results[(i, repo)] = zoo.push_to_hub(models[i], repo, commit_message=f"push {i}")

    threads = [threading.Thread(target=push, args=(i, f"{repo_id}-{i}")) for i in range(8)]
    threads += [threading.Thread(target=push, args=(i, repo_id)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(results) == 16
    for (i, repo), commit in results.items():  # every commit holds exactly the weights pushed with it
        assert torch.equal(_out(zoo.create(f"hf-hub:{repo}@{commit}", pretrained=True)), _out(models[i]))
    from huggingface_hub import HfApi

    titles = [c.title for c in HfApi().list_repo_commits(repo_id)]
    assert sorted(t for t in titles if t.startswith("push ")) == [f"push {i}" for i in range(8)]


# ---- hostile input ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["local-dir:/tmp/a\0b", "local-dir:" + "x" * 5000, "local-dir:/nonexistent/dir"])
def test_hostile_local_dir_names(name):
    with pytest.raises(zoo.WeightsNotFound):
        zoo.create(name, pretrained=True)


def _saved(tmp_path):
    return zoo.save_pretrained(zoo.create("fixture_mlp"), tmp_path / "m")


@pytest.mark.parametrize("weights_name", ["../../etc/passwd", "/etc/passwd", "a\0b", ".hidden"])
def test_config_weight_file_names_must_be_plain(tmp_path, weights_name):
    folder = _saved(tmp_path)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["weights"] = {weights_name: cfg["weights"]["model.safetensors"]}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.UnsafeConfig, match="plain file name"):
        zoo.create(f"local-dir:{folder}", pretrained=True)


def test_oversized_and_malformed_configs(tmp_path):
    folder = _saved(tmp_path)
    (folder / "config.json").write_text("{" + " " * (2 << 20) + "}")
    with pytest.raises(zoo.UnsafeConfig, match="at most"):
        zoo.create(f"local-dir:{folder}")
    (folder / "config.json").write_text("[1, 2")
    with pytest.raises(zoo.UnsafeConfig, match="not valid JSON"):
        zoo.create(f"local-dir:{folder}")
    (folder / "config.json").write_text("[]")
    with pytest.raises(zoo.UnsafeConfig, match="JSON object"):
        zoo.create(f"local-dir:{folder}")


@pytest.mark.parametrize("payload, message", [
    ((10**12).to_bytes(8, "little") + b"{}", "header claims"),
    ((5).to_bytes(8, "little") + b"{not}", "not valid JSON"),
    ((2).to_bytes(8, "little") + b"[]", "not a JSON object"),
    (b"\x01", "too short"),
])
def test_malformed_safetensors_headers(tmp_path, payload, message):
    """Even with a matching sha256 in config.json (an attacker controls both), a bad header is refused."""
    from zoo.weights import sha256_file

    folder = _saved(tmp_path)
    (folder / "model.safetensors").write_bytes(payload)
    cfg = json.loads((folder / "config.json").read_text())
    cfg["weights"]["model.safetensors"]["sha256"] = sha256_file(folder / "model.safetensors")
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(zoo.WeightsCorrupt, match=message):
        zoo.create(f"local-dir:{folder}", pretrained=True)
