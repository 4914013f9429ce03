"""The local hub's disk store: content-addressed blobs, per-repo commits and refs.

Layout under ``ROOT``::

    objects/sha256/ab/ab12…            file contents, named by their sha256 (shared by all repos)
    repos/models/ORG/NAME/repo.json    {"id", "type", "private", "createdAt"}
    repos/models/ORG/NAME/refs.json    {"refs/heads/main": COMMIT, "refs/tags/v1": COMMIT, "refs/pr/1": COMMIT}
    repos/models/ORG/NAME/commits/C.json
                                       {"parents", "tree": {path: {"sha256", "size", "lfs", "oid"}},
                                        "title", "message", "date", "author"}; C = sha1 of that JSON
    tmp/                               temp files; emptied when a hub starts

Every file is written to ``tmp/`` and moved into place with ``os.replace``, so a reader sees the old
file or the new one, never half of one. Commit files are immutable; a commit becomes visible only
when ``refs.json`` names it. One lock per repo serialises the writers of that repo.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

from ..fileio import atomic_write_bytes, atomic_writer
from .checks import (
    REPO_TYPES,
    URL_PREFIXES,
    CommitOp,
    HubError,
    bad_request,
    check_repo_id,
    is_commit_id,
    repo_not_found,
)

logger = logging.getLogger(__name__)

DEFAULT_BRANCH = "main"
USER_NAME = "local"

# Suffixes the Hub's default .gitattributes routes through LFS (the preupload rule uses them too).
LFS_SUFFIXES = (
    ".7z",
    ".arrow",
    ".bin",
    ".bz2",
    ".ckpt",
    ".ftz",
    ".gz",
    ".h5",
    ".joblib",
    ".mlmodel",
    ".model",
    ".msgpack",
    ".npy",
    ".npz",
    ".onnx",
    ".ot",
    ".parquet",
    ".pb",
    ".pickle",
    ".pkl",
    ".pt",
    ".pth",
    ".rar",
    ".safetensors",
    ".tar",
    ".tflite",
    ".tgz",
    ".wasm",
    ".xz",
    ".zip",
    ".zst",
)
LFS_MIN_SIZE = 10 * 1024 * 1024
GITATTRIBUTES = "".join(f"*{s} filter=lfs diff=lfs merge=lfs -text\n" for s in LFS_SUFFIXES) + (
    "*tfevents* filter=lfs diff=lfs merge=lfs -text\n"
)

# ---------------------------------------------------------------------------------------------------
# git-compatible ids


def git_blob_oid(data: bytes) -> str:
    """The git blob sha1 of ``data`` (what the Hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def file_entry(sha256: str, size: int, lfs: bool, data: bytes | None = None) -> dict:
    """A tree entry. ``oid`` is the git blob sha1 of the content, or of the LFS pointer file."""
    oid = git_blob_oid(lfs_pointer(sha256, size) if lfs else data or b"")
    return {"sha256": sha256, "size": size, "lfs": lfs, "oid": oid}


def lfs_info(entry: dict, key: str = "oid") -> dict:
    """The ``lfs`` object of a tree listing (``key="oid"``) or of a ``model_info`` sibling (``"sha256"``)."""
    pointer = lfs_pointer(entry["sha256"], entry["size"])
    return {key: entry["sha256"], "size": entry["size"], "pointerSize": len(pointer)}


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ---------------------------------------------------------------------------------------------------
# atomic files


def write_atomic(path: Path, data: bytes, tmp_dir: Path) -> None:
    """Write ``data`` to ``path`` through a temp file in ``tmp_dir``: readers never see half a file."""
    atomic_write_bytes(path, data, tmp_dir=tmp_dir)


def _unlink(path: str | Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _match_case(folder: Path, name: str) -> str:
    """The entry of ``folder`` equal to ``name`` ignoring case, else ``name`` itself."""
    try:
        entries = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return name
    if name in entries:
        return name
    folded = name.lower()
    return next((e for e in sorted(entries) if e.lower() == folded), name)


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class BlobStore:
    """File contents by sha256, shared by every repo (identical files are stored once)."""

    def __init__(self, root: Path, tmp_dir: Path):
        self.dir = root / "objects" / "sha256"
        self.tmp_dir = tmp_dir

    def path(self, sha256: str) -> Path:
        return self.dir / sha256[:2] / sha256

    def size(self, sha256: str) -> int | None:
        try:
            return self.path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    def put_bytes(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        if self.size(sha) != len(data):
            write_atomic(self.path(sha), data, self.tmp_dir)
        return sha

    def stage(self, op: CommitOp) -> None:
        """Write a regular file's content to a temp file now and keep only its ids in ``op`` (bounded memory).

        ``adopt`` moves it into place once the commit is checked; until then it is invisible, and the
        caller removes it (``discard``) if the commit fails.
        """
        data = op.data
        assert data is not None
        fd, tmp = tempfile.mkstemp(dir=self.tmp_dir, prefix="regular-")
        op.staged = tmp
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        op.sha256, op.size, op.oid, op.data = hashlib.sha256(data).hexdigest(), len(data), git_blob_oid(data), None

    def adopt(self, op: CommitOp) -> None:
        assert op.staged is not None and op.sha256 is not None
        if self.size(op.sha256) == op.size:
            _unlink(op.staged)
        else:
            target = self.path(op.sha256)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(op.staged, target)
        op.staged = None

    @staticmethod
    def discard(ops: Iterable[CommitOp]) -> None:
        for op in ops:
            if op.staged is not None:
                _unlink(op.staged)
                op.staged = None

    def put_stream(self, chunks: Iterable[bytes], sha256: str, size: int) -> None:
        """Store an upload, streamed to a temp file while hashing; kept only if sha256 and size match."""
        with atomic_writer(self.path(sha256), tmp_dir=self.tmp_dir) as f:  # a failed check below discards it
            digest, n = hashlib.sha256(), 0
            for chunk in chunks:
                n += len(chunk)
                if n > size:
                    raise bad_request(f"upload of {sha256} is larger than its declared size {size}")
                digest.update(chunk)
                f.write(chunk)
            if n != size:
                raise bad_request(f"upload of {sha256} has {n} bytes, expected {size}")
            if digest.hexdigest() != sha256:
                raise bad_request(f"upload content does not match its oid: sha256 is {digest.hexdigest()}, expected {sha256}")


# ---------------------------------------------------------------------------------------------------
# repos


class Repo:
    """One repo on disk. Reads need no lock: every file is either immutable or replaced atomically."""

    def __init__(self, store: HubStore, repo_type: str, repo_id: str):
        self.store = store
        self.type = repo_type
        self.id = repo_id
        self.dir = store.root / "repos" / REPO_TYPES[repo_type] / repo_id

    @property
    def url_path(self) -> str:
        return URL_PREFIXES[self.type] + self.id

    def exists(self) -> bool:
        return (self.dir / "refs.json").is_file()

    def _read(self, name: str) -> dict:
        try:
            return json.loads((self.dir / name).read_bytes())
        except FileNotFoundError:  # deleted since exists() was checked
            raise repo_not_found(self.type, self.id) from None

    def meta(self) -> dict:
        return self._read("repo.json")

    def refs(self) -> dict[str, str]:
        return self._read("refs.json")

    def commit(self, sha: str) -> dict:
        try:
            return json.loads((self.dir / "commits" / f"{sha}.json").read_bytes())
        except FileNotFoundError:
            if not self.exists():  # deleted meanwhile; otherwise the store is damaged: let it be a 500
                raise repo_not_found(self.type, self.id) from None
            raise

    def has_commit(self, sha: str) -> bool:
        return is_commit_id(sha) and (self.dir / "commits" / f"{sha}.json").is_file()

    def resolve(self, revision: str) -> tuple[str, str | None]:
        """Return ``(commit, ref)`` for a branch, tag, full ref or 40-hex commit; ``ref`` is None for a commit."""
        refs = self.refs()
        for ref in (f"refs/heads/{revision}", f"refs/tags/{revision}", revision):
            if ref.startswith("refs/") and ref in refs:
                return refs[ref], ref
        if self.has_commit(revision):
            return revision, None
        raise HubError(404, f"revision {revision!r} not found in {self.id}", "RevisionNotFound")

    def history(self, sha: str, limit: int = 100_000) -> Iterable[tuple[str, dict]]:
        """Commits from ``sha`` back along first parents, newest first."""
        while sha and limit > 0:
            commit = self.commit(sha)
            yield sha, commit
            sha = commit["parents"][0] if commit["parents"] else None
            limit -= 1

    def last_commits(self, head: str, targets: Iterable[str]) -> dict[str, dict]:
        """For each file or folder path in ``targets``: the newest commit that changed it."""
        todo, found = set(targets), {}
        for sha, commit in self.history(head, limit=10_000):
            if not todo:
                break
            parent = self.commit(commit["parents"][0])["tree"] if commit["parents"] else {}
            tree = commit["tree"]
            changed = {p for p in tree.keys() | parent.keys() if tree.get(p) != parent.get(p)}
            summary = {"id": sha, "title": commit["title"], "date": commit["date"]}
            touched = set(changed)  # the changed files and every folder above them
            for p in changed:
                while "/" in p:
                    p = p.rsplit("/", 1)[0]
                    touched.add(p)
            for target in todo & touched:
                found[target] = summary
            todo -= touched
        return found


class TreeIndex:
    """One commit's tree arranged for listings, built once per commit in one pass (commits are immutable).

    ``children[d]`` holds the paths directly inside folder ``d`` (``""`` is the root), ``under[d]`` every
    file below it; so a listing costs the size of its answer, not (files x folders) as a scan per folder did.
    """

    def __init__(self, tree: dict[str, dict]):
        self.tree = tree
        self.children: dict[str, list[str]] = {"": []}
        self.under: dict[str, list[str]] = {"": []}
        for path in sorted(tree):
            parts = path.split("/")
            parent = ""
            for i in range(1, len(parts)):
                folder = "/".join(parts[:i])
                if folder not in self.children:
                    self.children[folder], self.under[folder] = [], []
                    self.children[parent].append(folder)
                self.under[folder].append(path)
                parent = folder
            self.children[parent].append(path)
            self.under[""].append(path)
        self._oids: dict[str, str] = {}

    def is_dir(self, path: str) -> bool:
        return path in self.children and path not in self.tree

    def dir_oid(self, path: str) -> str:
        """A stable id of a folder's contents (same value as before the index existed)."""
        oid = self._oids.get(path)
        if oid is None:
            inside = [(p, self.tree[p]["oid"]) for p in self.under[path]]  # already sorted
            oid = self._oids[path] = hashlib.sha1(repr(inside).encode()).hexdigest()
        return oid

    def listing(self, folder: str, recursive: bool) -> list[str]:
        """Sorted paths inside ``folder`` (files and folders; every level when ``recursive``)."""
        if not recursive:
            return sorted(self.children[folder])
        out, todo = [], [folder]
        while todo:
            for child in self.children[todo.pop()]:
                out.append(child)
                if child in self.children:
                    todo.append(child)
        return sorted(out)


class HubStore:
    """All repos under one root directory, with the write operations the HTTP API needs.

    Repo ids are case-insensitive, like on the Hub: ``Org/Repo`` and ``org/repo`` name one repo, kept
    under the spelling it was created with (lookups in another case resolve to it; creating it again in
    another case is a 409). A namespace keeps the case of its first repo.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).resolve()
        self.tmp_dir = self.root / "tmp"
        for d in (self.root / "objects" / "sha256", self.root / "repos", self.tmp_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.blobs = BlobStore(self.root, self.tmp_dir)
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._create_guard = threading.Lock()  # creations are rare: one at a time keeps case-folding race-free
        self._indexes: OrderedDict[tuple[str, str], TreeIndex] = OrderedDict()
        self._indexes_guard = threading.Lock()

    def clear_tmp(self) -> None:
        """Remove what an interrupted write left in ``tmp/`` (call only while no other hub uses the root)."""
        for entry in self.tmp_dir.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                _unlink(entry)

    def lock(self, repo_type: str, repo_id: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault((repo_type, repo_id.lower()), threading.Lock())

    def repo(self, repo_type: str, repo_id: str) -> Repo:
        """The repo named ``repo_id`` in any letter case (see the class docstring); it may not exist yet."""
        if repo_type not in REPO_TYPES:
            raise bad_request(f"invalid repo type {repo_type!r}: expected one of {sorted(REPO_TYPES)}")
        return Repo(self, repo_type, self._canonical(repo_type, check_repo_id(repo_id)))

    def _canonical(self, repo_type: str, repo_id: str) -> str:
        base = self.root / "repos" / REPO_TYPES[repo_type]
        if (base / repo_id).is_dir():  # the common case: one stat
            return repo_id
        namespace, name = repo_id.split("/")
        namespace = _match_case(base, namespace)
        return f"{namespace}/{_match_case(base / namespace, name)}"

    def tree_index(self, repo: Repo, sha: str) -> TreeIndex:
        """The ``TreeIndex`` of commit ``sha`` (kept for the last few commits listed)."""
        key = (str(repo.dir), sha)
        with self._indexes_guard:
            index = self._indexes.get(key)
            if index is not None:
                self._indexes.move_to_end(key)
                return index
        index = TreeIndex(repo.commit(sha)["tree"])
        with self._indexes_guard:
            self._indexes[key] = index
            while len(self._indexes) > 16:
                self._indexes.popitem(last=False)
        return index

    def list_repos(self, repo_type: str) -> list[Repo]:
        base = self.root / "repos" / REPO_TYPES[repo_type]
        repos = [Repo(self, repo_type, f"{p.parent.name}/{p.name}") for p in sorted(base.glob("*/*"))]
        return [r for r in repos if r.exists()]

    # -- writes ------------------------------------------------------------------------------------

    def create_repo(self, repo: Repo, private: bool, extra: dict | None = None) -> Repo:
        """Create ``repo`` with an initial commit holding ``.gitattributes``; 409 if it exists (in any case).

        The repo is assembled in ``tmp/`` and renamed into place, so it appears whole or not at all.
        Returns the repo as created (its namespace spelled as already on disk).
        """
        with self._create_guard, self.lock(repo.type, repo.id):
            repo = self.repo(repo.type, repo.id)  # again, under the guard: another case may have just been made
            if repo.dir.exists():
                raise HubError(409, f"{repo.type} repository {repo.id!r} already exists (repo ids ignore case)")
            data = GITATTRIBUTES.encode()
            sha = self.blobs.put_bytes(data)
            date = now_iso()
            commit = {
                "parents": [],
                "tree": {".gitattributes": file_entry(sha, len(data), lfs=False, data=data)},
                "title": "initial commit",
                "message": "",
                "date": date,
                "author": USER_NAME,
            }
            body = _dumps(commit)
            commit_id = hashlib.sha1(body).hexdigest()
            staging = Path(tempfile.mkdtemp(dir=self.tmp_dir, prefix="repo-"))
            try:
                (staging / "commits").mkdir()
                meta = {"id": repo.id, "type": repo.type, "private": bool(private), "createdAt": date}
                meta.update(extra or {})
                write_atomic(staging / "repo.json", _dumps(meta), self.tmp_dir)
                write_atomic(staging / "commits" / f"{commit_id}.json", body, self.tmp_dir)
                write_atomic(staging / "refs.json", _dumps({"refs/heads/main": commit_id}), self.tmp_dir)
                repo.dir.parent.mkdir(parents=True, exist_ok=True)
                os.rename(staging, repo.dir)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        logger.info("created %s repo %s", repo.type, repo.id)
        return repo

    def delete_repo(self, repo: Repo) -> None:
        with self.lock(repo.type, repo.id):
            if not repo.exists():
                raise repo_not_found(repo.type, repo.id)
            trash = Path(tempfile.mkdtemp(dir=self.tmp_dir, prefix="deleted-"))
            os.rename(repo.dir, trash / "repo")  # atomic: the repo vanishes at once
            shutil.rmtree(trash, ignore_errors=True)
        logger.info("deleted %s repo %s", repo.type, repo.id)

    def update_meta(self, repo: Repo, **changes: object) -> None:
        with self.lock(repo.type, repo.id):
            if not repo.exists():
                raise repo_not_found(repo.type, repo.id)
            meta = repo.meta()
            meta.update(changes)
            write_atomic(repo.dir / "repo.json", _dumps(meta), self.tmp_dir)

    def set_ref(self, repo: Repo, ref: str, target: str | None, must_exist: bool | None) -> None:
        """Create (``must_exist=False``), move, or delete (``target=None``) one ref."""
        with self.lock(repo.type, repo.id):
            if not repo.exists():
                raise repo_not_found(repo.type, repo.id)
            refs = repo.refs()
            if must_exist is False and ref in refs:
                raise HubError(409, f"{ref} already exists in {repo.id}")
            if must_exist and ref not in refs:
                raise HubError(404, f"{ref} not found in {repo.id}", "RevisionNotFound")
            if target is None:
                refs.pop(ref, None)
            else:
                refs[ref] = target
            write_atomic(repo.dir / "refs.json", _dumps(refs), self.tmp_dir)

    def commit(
        self,
        repo: Repo,
        revision: str,
        ops: list[CommitOp],
        title: str,
        message: str,
        parent_commit: str | None = None,
        create_pr: bool = False,
    ) -> tuple[str, int | None]:
        """Apply ``ops`` on top of ``revision`` and move the branch (or open PR ``refs/pr/N``).

        Returns ``(commit_id, pr_number)``. Everything is checked before the first byte is written;
        the ref update is the last step, so a failure leaves the repo as it was.
        """
        with self.lock(repo.type, repo.id):
            if not repo.exists():
                raise repo_not_found(repo.type, repo.id)
            head, ref = repo.resolve(revision)
            if not create_pr and (ref is None or not ref.startswith(("refs/heads/", "refs/pr/"))):
                raise bad_request(f"cannot commit to {revision!r}: it is not a branch (create one with create_branch)")
            if parent_commit is not None and parent_commit != head:
                raise HubError(
                    412,
                    f"A commit has happened since. Please refresh and try again. ({revision} is at {head}, "
                    f"parentCommit was {parent_commit})",
                )
            tree = dict(repo.commit(head)["tree"])
            writes: list[bytes] = []
            staged: list[CommitOp] = []
            for op in ops:
                if op.kind == "file" and op.staged is not None:
                    assert op.sha256 is not None and op.size is not None and op.oid is not None
                    tree[op.path] = {"sha256": op.sha256, "size": op.size, "lfs": False, "oid": op.oid}
                    staged.append(op)
                elif op.kind == "file":
                    assert op.data is not None
                    tree[op.path] = file_entry(hashlib.sha256(op.data).hexdigest(), len(op.data), False, op.data)
                    writes.append(op.data)
                elif op.kind == "lfsFile":
                    assert op.sha256 is not None
                    stored = self.blobs.size(op.sha256)
                    if stored is None or (op.size is not None and op.size != stored):
                        raise bad_request(
                            f"LFS object {op.sha256} for {op.path!r} was not uploaded (or has another size); "
                            "upload it through the LFS batch endpoint first"
                        )
                    tree[op.path] = file_entry(op.sha256, stored, lfs=True)
                elif op.kind == "deletedFile":
                    if tree.pop(op.path, None) is None:
                        raise HubError(404, f"A file with this name doesn't exist: {op.path!r}", "EntryNotFound", head)
                else:
                    prefix = op.path.rstrip("/") + "/"
                    gone = [p for p in tree if p.startswith(prefix)]
                    if not gone:
                        raise HubError(404, f"A folder with this name doesn't exist: {op.path!r}", "EntryNotFound", head)
                    for p in gone:
                        del tree[p]
            for path in tree:  # a path cannot be both a file and a folder
                parts = path.split("/")
                for i in range(1, len(parts)):
                    if "/".join(parts[:i]) in tree:
                        raise bad_request(f"{path!r} would be inside {'/'.join(parts[:i])!r}, which is a file")

            for data in writes:
                self.blobs.put_bytes(data)
            for op in staged:
                self.blobs.adopt(op)
            commit = {
                "parents": [head],
                "tree": tree,
                "title": title,
                "message": message,
                "date": now_iso(),
                "author": USER_NAME,
            }
            body = _dumps(commit)
            commit_id = hashlib.sha1(body).hexdigest()
            commit_path = repo.dir / "commits" / f"{commit_id}.json"
            existed = commit_path.exists()
            write_atomic(commit_path, body, self.tmp_dir)

            refs = repo.refs()
            pr_number = None
            if create_pr:
                numbers = [int(r.rsplit("/", 1)[1]) for r in refs if r.startswith("refs/pr/")]
                pr_number = max(numbers, default=0) + 1
                ref = f"refs/pr/{pr_number}"
            refs[ref] = commit_id
            try:
                write_atomic(repo.dir / "refs.json", _dumps(refs), self.tmp_dir)
            except BaseException:
                if not existed:  # nothing points at it: leave no trace
                    _unlink(commit_path)
                raise
        logger.info("commit %s on %s %s (%s)", commit_id[:12], repo.id, ref, title)
        return commit_id, pr_number
