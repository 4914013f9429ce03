"""The local hub (zoo.hubserver) driven by the real clients: huggingface_hub's HfApi, hf_hub_download,
snapshot_download, and timm's push_to_hf_hub / ``hf-hub:`` loading. Raw ``http.client`` requests cover
what the clients never send (hostile ids and paths, bad LFS uploads, chunked bodies, ranges)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote, urlsplit

import numpy as np
import pytest
from huggingface_hub import (
    CommitOperationAdd,
    HfApi,
    hf_hub_download,
    snapshot_download,
)
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile, RepoFolder
from safetensors.numpy import load as load_safetensors
from safetensors.numpy import save as save_safetensors

from zoo.hubserver import LocalHub

TOKEN = "zoo-test-token"  # the conftest hub's token (HF_TOKEN holds it too)


# -- helpers -----------------------------------------------------------------------------------------


def _weights() -> bytes:
    return save_safetensors({"w": np.arange(300, dtype=np.float32).reshape(30, 10), "b": np.ones(10, np.float32)})


def _make_folder(root: Path) -> dict[str, bytes]:
    files = {
        "notes.txt": b"hello from the local hub\n",
        "sub/deep/a.txt": b"nested file\n",
        "model.safetensors": _weights(),
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def _request(hub, method, path, body=b"", headers=None, token=TOKEN, encode_chunked=False):
    """One raw HTTP request to ``hub``; returns (status, headers, body)."""
    url = urlsplit(hub.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        all_headers = {"Authorization": f"Bearer {token}"} if token else {}
        all_headers.update(headers or {})
        conn.request(method, path, body=body, headers=all_headers, encode_chunked=encode_chunked)
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def _json_request(hub, method, path, obj, **kw):
    return _request(hub, method, path, json.dumps(obj).encode(), {"Content-Type": "application/json"}, **kw)


def _ndjson_commit(summary, *ops):
    lines = [{"key": "header", "value": {"summary": summary, "description": ""}}, *ops]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _file_op(path, data=b"x"):
    return {"key": "file", "value": {"path": path, "content": base64.b64encode(data).decode(), "encoding": "base64"}}


def _disk_state(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def api(hub):
    return HfApi(endpoint=hub.url, token=TOKEN)


@pytest.fixture
def pushed(api, repo_id, tmp_path):
    """A repo with one upload_folder commit: two regular files and one LFS safetensors file."""
    files = _make_folder(tmp_path / "src")
    api.create_repo(repo_id)
    info = api.upload_folder(repo_id=repo_id, folder_path=tmp_path / "src", commit_message="add files")
    return repo_id, info.oid, files


@pytest.fixture
def own_hub(tmp_path):
    """A hub of its own (not the session one), so a test can inspect every file under its root."""
    with LocalHub(tmp_path / "own-hub", tokens=[TOKEN]) as hub:
        yield hub


# -- push and pull -----------------------------------------------------------------------------------


def test_upload_folder_then_read_back_with_every_listing_call(api, pushed, tmp_path):
    repo_id, commit, files = pushed
    url = api.create_repo(repo_id, exist_ok=True)  # 409 answered with the url in its body
    assert url.repo_id == repo_id

    assert api.list_repo_files(repo_id) == [".gitattributes", "model.safetensors", "notes.txt", "sub/deep/a.txt"]
    info = api.model_info(repo_id, files_metadata=True)
    assert info.sha == commit and info.private is False
    by_name = {s.rfilename: s for s in info.siblings}
    weights = files["model.safetensors"]
    assert by_name["model.safetensors"].size == len(weights)
    assert by_name["model.safetensors"].lfs.sha256 == hashlib.sha256(weights).hexdigest()
    assert by_name["notes.txt"].lfs is None and by_name["notes.txt"].size == len(files["notes.txt"])

    top = {e.path: type(e) for e in api.list_repo_tree(repo_id)}
    assert top == {".gitattributes": RepoFile, "model.safetensors": RepoFile, "notes.txt": RepoFile, "sub": RepoFolder}
    deep = {e.path for e in api.list_repo_tree(repo_id, recursive=True)}
    assert {"sub", "sub/deep", "sub/deep/a.txt"} <= deep
    assert [e.path for e in api.list_repo_tree(repo_id, path_in_repo="sub/deep")] == ["sub/deep/a.txt"]
    expanded = next(iter(api.list_repo_tree(repo_id, path_in_repo="sub", expand=True)))
    assert expanded.last_commit.oid == commit

    paths = api.get_paths_info(repo_id, ["notes.txt", "sub", "missing.txt"])
    assert [(type(p), p.path) for p in paths] == [(RepoFile, "notes.txt"), (RepoFolder, "sub")]
    assert paths[0].blob_id == hashlib.sha1(b"blob %d\0" % len(files["notes.txt"]) + files["notes.txt"]).hexdigest()

    assert api.file_exists(repo_id, "sub/deep/a.txt") and not api.file_exists(repo_id, "nope.txt")
    commits = api.list_repo_commits(repo_id)
    assert commits[0].commit_id == commit and len(commits) == 2
    assert commits[0].title == "add files" and commits[1].title == "initial commit"

    for name, data in files.items():
        assert Path(hf_hub_download(repo_id, name, cache_dir=tmp_path / "c1")).read_bytes() == data
    loaded = load_safetensors(Path(hf_hub_download(repo_id, "model.safetensors", revision=commit)).read_bytes())
    assert loaded["w"].shape == (30, 10)

    # Unchanged files are recognised (preupload oids) and no empty commit is made.
    again = api.upload_folder(repo_id=repo_id, folder_path=tmp_path / "src")
    assert again.oid == commit and len(api.list_repo_commits(repo_id)) == 2


def test_snapshot_download_and_delete(api, pushed, tmp_path):
    repo_id, commit, files = pushed
    snap = Path(snapshot_download(repo_id, cache_dir=tmp_path / "cache"))
    assert snap.name == commit
    assert {n: (snap / n).read_bytes() for n in files} == files
    only_txt = Path(snapshot_download(repo_id, allow_patterns=["*.txt"], cache_dir=tmp_path / "cache2"))
    assert not (only_txt / "model.safetensors").exists() and (only_txt / "notes.txt").exists()

    api.delete_file("notes.txt", repo_id)
    api.delete_folder("sub", repo_id)
    assert api.list_repo_files(repo_id) == [".gitattributes", "model.safetensors"]
    assert api.list_repo_files(repo_id, revision=commit) != api.list_repo_files(repo_id)  # history kept


def test_branches_tags_and_downloads_by_every_kind_of_revision(api, pushed, tmp_path):
    repo_id, commit, _ = pushed
    api.create_branch(repo_id, branch="dev")
    api.create_branch(repo_id, branch="dev", exist_ok=True)
    with pytest.raises(HfHubHTTPError) as err:
        api.create_branch(repo_id, branch="dev")
    assert err.value.response.status_code == 409
    dev = api.upload_file(path_or_fileobj=b"dev version\n", path_in_repo="notes.txt", repo_id=repo_id, revision="dev")
    api.create_tag(repo_id, tag="v1.0", revision=commit)

    refs = api.list_repo_refs(repo_id)
    assert {(b.name, b.target_commit) for b in refs.branches} == {("main", commit), ("dev", dev.oid)}
    assert [(t.name, t.ref, t.target_commit) for t in refs.tags] == [("v1.0", "refs/tags/v1.0", commit)]

    def read(rev):
        return Path(hf_hub_download(repo_id, "notes.txt", revision=rev, cache_dir=tmp_path / "c")).read_bytes()

    assert read("dev") == read(dev.oid) == b"dev version\n"
    assert read("main") == read("v1.0") == read(commit) == b"hello from the local hub\n"
    assert api.model_info(repo_id, revision="v1.0").sha == commit
    assert [c.commit_id for c in api.list_repo_commits(repo_id, revision="dev")][:2] == [dev.oid, commit]


def test_create_pr_opens_refs_pr_n_and_leaves_main_alone(api, pushed, tmp_path):
    repo_id, commit, _ = pushed
    pr = api.upload_file(path_or_fileobj=b"proposal\n", path_in_repo="notes.txt", repo_id=repo_id, create_pr=True)
    assert pr.pr_revision == "refs/pr/1" and pr.pr_num == 1
    assert api.model_info(repo_id).sha == commit
    refs = api.list_repo_refs(repo_id, include_pull_requests=True)
    assert [(p.ref, p.target_commit) for p in refs.pull_requests] == [("refs/pr/1", pr.oid)]
    path = hf_hub_download(repo_id, "notes.txt", revision="refs/pr/1", cache_dir=tmp_path / "c")
    assert Path(path).read_bytes() == b"proposal\n"
    pr2 = api.upload_file(path_or_fileobj=b"other\n", path_in_repo="other.txt", repo_id=repo_id, create_pr=True)
    assert pr2.pr_revision == "refs/pr/2"


def test_dataset_and_space_repos_use_their_url_prefix(api, repo_id, tmp_path):
    api.create_repo(repo_id, repo_type="dataset")
    api.upload_file(path_or_fileobj=b"a,b\n1,2\n", path_in_repo="data.csv", repo_id=repo_id, repo_type="dataset")
    path = hf_hub_download(repo_id, "data.csv", repo_type="dataset", cache_dir=tmp_path / "c")
    assert Path(path).read_bytes() == b"a,b\n1,2\n"
    assert api.dataset_info(repo_id).id == repo_id
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(repo_id)  # same id, other type
    url = api.create_repo(repo_id, repo_type="space", space_sdk="static")
    assert url.repo_type == "space" and api.list_repo_files(repo_id, repo_type="space") == [".gitattributes"]


def test_errors_map_to_the_client_exception_classes(api, pushed, tmp_path):
    repo_id, commit, _ = pushed
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(repo_id + "-missing")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download(repo_id + "-missing", "notes.txt", cache_dir=tmp_path / "c")
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(repo_id, "notes.txt", revision="no-such-branch", cache_dir=tmp_path / "c")
    with pytest.raises(RevisionNotFoundError):
        api.model_info(repo_id, revision="0" * 40)
    with pytest.raises(RemoteEntryNotFoundError) as err:
        hf_hub_download(repo_id, "missing.bin", cache_dir=tmp_path / "c")
    assert isinstance(err.value, EntryNotFoundError)
    assert err.value.response.headers["X-Repo-Commit"] == commit
    assert api.whoami()["name"]
    assert api.repo_exists(repo_id) and not api.repo_exists(repo_id + "-missing")


def test_bad_token_cannot_write(hub, pushed):
    repo_id, commit, _ = pushed
    bad = HfApi(endpoint=hub.url, token="not-the-token")
    with pytest.raises(HfHubHTTPError) as err:
        bad.create_repo(repo_id + "-x")
    assert err.value.response.status_code == 401
    assert not isinstance(err.value, RepositoryNotFoundError)
    with pytest.raises(HfHubHTTPError) as err:
        bad.upload_file(path_or_fileobj=b"evil", path_in_repo="notes.txt", repo_id=repo_id)
    assert err.value.response.status_code == 401
    anonymous = HfApi(endpoint=hub.url, token=False)
    assert anonymous.model_info(repo_id).sha == commit  # public reads need no token
    assert _request(hub, "POST", f"/api/models/{repo_id}/commit/main", b"", token=None)[0] == 401
    assert HfApi(endpoint=hub.url, token=TOKEN).model_info(repo_id).sha == commit


def test_private_repo_is_invisible_without_a_token(hub, api, repo_id, tmp_path):
    api.create_repo(repo_id, private=True)
    api.upload_file(path_or_fileobj=b"secret\n", path_in_repo="s.txt", repo_id=repo_id)
    assert api.model_info(repo_id).private is True
    anonymous = HfApi(endpoint=hub.url, token=False)
    with pytest.raises(RepositoryNotFoundError):
        anonymous.model_info(repo_id)
    with pytest.raises(RepositoryNotFoundError):
        anonymous.list_repo_files(repo_id)
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download(repo_id, "s.txt", token=False, cache_dir=tmp_path / "c")
    assert repo_id not in {m.id for m in anonymous.list_models(author=repo_id.split("/")[0])}
    assert repo_id in {m.id for m in api.list_models(author=repo_id.split("/")[0])}
    path = hf_hub_download(repo_id, "s.txt", cache_dir=tmp_path / "c")
    assert Path(path).read_bytes() == b"secret\n"


def test_concurrent_pushes_to_one_repo_lose_nothing(hub, repo_id):
    HfApi(endpoint=hub.url, token=TOKEN).create_repo(repo_id)
    errors = []

    def push(i):
        ops = [
            CommitOperationAdd(path_in_repo=f"f{i}.txt", path_or_fileobj=f"file {i}\n".encode()),
            CommitOperationAdd(path_in_repo=f"w{i}.safetensors", path_or_fileobj=bytes([i]) * 1000),  # LFS
        ]
        try:
            HfApi(endpoint=hub.url, token=TOKEN).create_commit(repo_id, ops, commit_message=f"push {i}")
        except Exception as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=push, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    api = HfApi(endpoint=hub.url, token=TOKEN)
    expected = {".gitattributes"} | {f"f{i}.txt" for i in range(8)} | {f"w{i}.safetensors" for i in range(8)}
    assert set(api.list_repo_files(repo_id)) == expected
    commits = api.list_repo_commits(repo_id)
    assert len(commits) == 9 and {c.title for c in commits[:8]} == {f"push {i}" for i in range(8)}


def test_stale_parent_commit_is_refused(api, pushed):
    repo_id, commit, _ = pushed
    newer = api.upload_file(path_or_fileobj=b"v2\n", path_in_repo="notes.txt", repo_id=repo_id)
    op = CommitOperationAdd(path_in_repo="notes.txt", path_or_fileobj=b"v3\n")
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(repo_id, [op], commit_message="stale", parent_commit=commit)
    assert err.value.response.status_code == 412
    assert api.model_info(repo_id).sha == newer.oid
    op = CommitOperationAdd(path_in_repo="notes.txt", path_or_fileobj=b"v3\n")
    assert api.create_commit(repo_id, [op], commit_message="fresh", parent_commit=newer.oid).oid != newer.oid


# -- persistence ------------------------------------------------------------------------------------


def test_data_survives_a_restart_and_a_root_is_served_once(tmp_path, repo_id):
    root = tmp_path / "persist"
    with LocalHub(root, tokens=[TOKEN]) as first:
        files = _make_folder(tmp_path / "src")
        api = HfApi(endpoint=first.url, token=TOKEN)
        api.create_repo(repo_id)
        commit = api.upload_folder(repo_id=repo_id, folder_path=tmp_path / "src").oid
        api.create_tag(repo_id, tag="v1")
        with pytest.raises(RuntimeError, match="already served"):
            LocalHub(root).start()
    with LocalHub(root, tokens=[TOKEN]) as second:
        api = HfApi(endpoint=second.url, token=TOKEN)
        assert api.model_info(repo_id).sha == commit
        assert [t.name for t in api.list_repo_refs(repo_id).tags] == ["v1"]
        for name, data in files.items():
            path = hf_hub_download(repo_id, name, revision="v1", endpoint=second.url, cache_dir=tmp_path / "c")
            assert Path(path).read_bytes() == data


@pytest.mark.parametrize("entry", [["-m", "zoo.hubserver"], ["-m", "zoo.cli", "hub", "serve"]],
                         ids=["python -m zoo.hubserver", "zoo hub serve"])
def test_command_line_serves_until_sigterm(tmp_path, repo_id, entry):
    """Both command lines are one implementation: same options, same output, push/pull, SIGTERM exits 0."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, *entry, "--root", str(tmp_path / "cli"), "--port", "0", "--token", "cli-token",
           "--token", "second-token", "--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"serving {tmp_path / 'cli'} on http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split(" on ", 1)[1].split()[0]
        HfApi(endpoint=url, token="cli-token").create_repo(repo_id)
        HfApi(endpoint=url, token="second-token").upload_file(path_or_fileobj=b"pushed\n", path_in_repo="a.txt",
                                                               repo_id=repo_id)  # every --token is accepted
        with pytest.raises(HfHubHTTPError):
            HfApi(endpoint=url, token=TOKEN).create_repo(repo_id + "-2")  # only --token is accepted
        path = hf_hub_download(repo_id, "a.txt", endpoint=url, cache_dir=tmp_path / "c")
        assert Path(path).read_bytes() == b"pushed\n"
    finally:
        proc.terminate()  # SIGTERM
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert err == ""  # no traceback, and --log-level warning silenced the INFO lines
    assert (tmp_path / "cli" / "repos" / "models" / repo_id / "refs.json").is_file()


def test_command_line_refuses_a_root_already_served(tmp_path):
    with LocalHub(tmp_path / "root", tokens=["t"]):
        r = subprocess.run([sys.executable, "-m", "zoo.hubserver", "--root", str(tmp_path / "root"), "--port", "0"],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    assert "error: cannot serve" in r.stderr and "already served by another hub" in r.stderr


# -- wire-level behaviour ---------------------------------------------------------------------------


def test_resolve_headers_ranges_and_chunked_bodies(hub, pushed):
    repo_id, commit, files = pushed
    weights = files["model.safetensors"]
    sha = hashlib.sha256(weights).hexdigest()
    status, headers, body = _request(hub, "HEAD", f"/{repo_id}/resolve/main/model.safetensors")
    assert status == 200 and body == b""
    assert headers["X-Repo-Commit"] == commit
    assert headers["X-Linked-Etag"] == f'"{sha}"' and headers["X-Linked-Size"] == str(len(weights))
    assert headers["Content-Length"] == str(len(weights)) and headers["ETag"]

    status, headers, body = _request(
        hub, "GET", f"/{repo_id}/resolve/{commit}/model.safetensors", headers={"Range": "bytes=10-19"}
    )
    assert status == 206 and body == weights[10:20]
    assert headers["Content-Range"] == f"bytes 10-19/{len(weights)}"
    assert _request(hub, "GET", f"/{repo_id}/resolve/main/notes.txt", headers={"Range": "bytes=-6"})[2] == b"l hub\n"
    assert _request(hub, "GET", f"/{repo_id}/resolve/main/notes.txt", headers={"Range": "bytes=999-"})[0] == 416

    def chunks():
        yield _ndjson_commit("chunked")
        yield b""  # (http.client skips empty chunks)
        yield json.dumps(_file_op("chunked.txt", b"sent in chunks")).encode() + b"\n"

    status, _, body = _request(
        hub, "POST", f"/api/models/{repo_id}/commit/main", chunks(), {"Content-Type": "application/x-ndjson"}, encode_chunked=True
    )
    assert status == 200, body
    assert _request(hub, "GET", f"/{repo_id}/resolve/main/chunked.txt")[2] == b"sent in chunks"

    # Keep-alive: an error reply on a connection with an unread body must not poison the next request.
    url = urlsplit(hub.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    conn.request("POST", "/api/models/no/such-route", body=b"x" * 5000)
    first = conn.getresponse()
    first.read()
    conn.request("GET", f"/api/models/{repo_id}")
    second = conn.getresponse()
    assert (first.status, second.status) == (404, 200) and json.loads(second.read())["sha"]
    conn.close()
    assert _request(hub, "GET", f"/api/models/{repo_id}/xet-read-token/{commit}")[0] == 404


def test_lfs_upload_is_verified_and_a_bad_one_leaves_nothing(own_hub, repo_id):
    hub, root = own_hub, own_hub.root
    assert (
        _json_request(hub, "POST", "/api/repos/create", {"name": repo_id.split("/")[1], "organization": repo_id.split("/")[0]})[0]
        == 200
    )
    data = b"\x00binary payload" * 1000
    oid = hashlib.sha256(data).hexdigest()
    batch = {"operation": "upload", "transfers": ["basic"], "objects": [{"oid": oid, "size": len(data)}]}
    status, _, body = _json_request(hub, "POST", f"/{repo_id}.git/info/lfs/objects/batch", batch)
    assert status == 200
    href = urlsplit(json.loads(body)["objects"][0]["actions"]["upload"]["href"])
    upload_path = f"{href.path}?{href.query}"
    before = _disk_state(root)

    assert _request(hub, "PUT", upload_path, data[:-1] + b"!", token=None)[0] == 400  # wrong content
    assert _request(hub, "PUT", upload_path, data[:100], token=None)[0] == 400  # short
    assert _request(hub, "PUT", upload_path.replace("sig=", "sig=0"), data, token=None)[0] == 403
    assert _disk_state(root) == before and list((root / "tmp").iterdir()) == []

    commit = _ndjson_commit(
        "lfs", {"key": "lfsFile", "value": {"path": "w.bin", "algo": "sha256", "oid": oid, "size": len(data)}}
    )
    assert _request(hub, "POST", f"/api/models/{repo_id}/commit/main", commit)[0] == 400  # not uploaded yet

    assert _request(hub, "PUT", upload_path, data, token=None, encode_chunked=False)[0] == 200
    assert (root / "objects" / "sha256" / oid[:2] / oid).read_bytes() == data
    assert _json_request(hub, "POST", f"/{repo_id}.git/info/lfs/verify", {"oid": oid, "size": len(data)})[0] == 200
    status, _, body = _json_request(hub, "POST", f"/{repo_id}.git/info/lfs/objects/batch", batch)
    assert "actions" not in json.loads(body)["objects"][0]  # already stored: nothing to upload
    assert _request(hub, "POST", f"/api/models/{repo_id}/commit/main", commit)[0] == 200
    assert _request(hub, "GET", f"/{repo_id}/resolve/main/w.bin")[2] == data


HOSTILE_IDS = [
    ("..", "x"),
    ("a", ".."),
    ("a", "b/c"),
    ("a", "..%2f..%2fx"),
    ("a", "x\x00y"),
    ("a", "x\\y"),
    ("a", ""),
    ("", "x"),
    ("a", "x" * 300),
    ("a", "space name"),
    ("/abs", "x"),
    ("a", "x.git"),
    ("api", "x"),
]
HOSTILE_PATHS = [
    "../evil.txt",
    "a/../../evil.txt",
    "/etc/passwd",
    "a//b.txt",
    "a\\b.txt",
    "a\x00b.txt",
    "./a.txt",
    "a/./b.txt",
    ".git/config",
    "x" * 256,
    "/".join(["d" * 200] * 6),
    "",
    "dir/",
]


def test_hostile_ids_and_paths_are_refused_and_write_nothing(own_hub, repo_id):
    hub, root = own_hub, own_hub.root
    org, name = repo_id.split("/")
    assert _json_request(hub, "POST", "/api/repos/create", {"name": name, "organization": org})[0] == 200
    before = _disk_state(root)

    for bad_org, bad_name in HOSTILE_IDS:
        status, _, body = _json_request(hub, "POST", "/api/repos/create", {"name": bad_name, "organization": bad_org})
        assert status == 400, (bad_org, bad_name, body)
    for path in HOSTILE_PATHS:
        commit = _ndjson_commit("evil", _file_op("fine.txt"), _file_op(path))
        status, _, body = _request(hub, "POST", f"/api/models/{repo_id}/commit/main", commit)
        assert status == 400, (path, body)
        preupload = {"files": [{"path": path, "size": 1, "sample": ""}]}
        assert _json_request(hub, "POST", f"/api/models/{repo_id}/preupload/main", preupload)[0] == 400, path
        assert _request(hub, "GET", f"/{repo_id}/resolve/main/{quote(path)}")[0] in (400, 404), path
    for raw in [
        "/%2e%2e/%2e%2e/resolve/main/x",
        f"/{org}/%2e%2e/resolve/main/x",
        f"/{repo_id}/resolve/main/..%2F..%2Fx",
        f"/api/models/{org}/..%2Fx/commit/main",
        f"/api/models/{repo_id}/tree/main/%2e%2e",
    ]:
        assert _request(hub, "POST" if raw.endswith("commit/main") else "GET", raw)[0] in (400, 404), raw
    lfs_commit = _ndjson_commit("evil", {"key": "lfsFile", "value": {"path": "w.bin", "oid": "../" * 20, "size": 1}})
    assert _request(hub, "POST", f"/api/models/{repo_id}/commit/main", lfs_commit)[0] == 400
    assert _request(hub, "POST", f"/api/models/{repo_id}/commit/main", b"{not json\n")[0] == 400
    assert _request(hub, "POST", f"/api/models/{repo_id}/branch/..%2Fx", b"{}")[0] == 400
    assert _request(hub, "POST", f"/api/models/{repo_id}/commit/main", b"{}", headers={"Content-Length": "-5"})[0] == 400

    assert _disk_state(root) == before
    assert list((root / "tmp").iterdir()) == []
    assert HfApi(endpoint=hub.url, token=TOKEN).list_repo_files(repo_id) == [".gitattributes"]


# -- timm -------------------------------------------------------------------------------------------


def test_timm_push_then_load_gives_identical_outputs(api, repo_id):
    torch = pytest.importorskip("torch")
    timm = pytest.importorskip("timm")
    from timm.models import push_to_hf_hub

    torch.manual_seed(0)
    model = timm.create_model("test_resnet", num_classes=5).eval()
    push_to_hf_hub(model, repo_id, commit_message="timm push", safe_serialization=True)
    assert {"config.json", "model.safetensors", "README.md"} <= set(api.list_repo_files(repo_id))

    loaded = timm.create_model("hf-hub:" + repo_id, pretrained=True).eval()
    x = torch.randn(2, 3, 160, 160)
    with torch.no_grad():
        assert torch.equal(model(x), loaded(x))
