"""Weight files: fetch them pinned to one commit, verify their sha256, load them strictly.

Offline first: a file pinned by commit and hash that is already in the Hub cache is used with no
network call at all. A file is hashed once; a small marker (size, mtime, inode) in zoo's cache
dir lets later loads of the same unchanged file skip the hash. A file that fails verification is
removed from the cache, so that it never poisons a later load.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# DownloadFailed and WeightsMismatch were defined here once: `from zoo.weights import ...` keeps working
from .errors import DownloadFailed, WeightsCorrupt, WeightsMismatch, WeightsNotFound
from .fileio import atomic_write_text
from .ids import is_commit

log = logging.getLogger(__name__)

SAFE_SUFFIXES = (".safetensors",)
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")
MAX_HEADER_BYTES = 100 * 1024 * 1024  # safetensors' own limit


def cache_dir() -> Path:
    """zoo's own cache (verification markers); ``ZOO_CACHE_DIR`` or ``~/.cache/zoo``."""
    root = os.environ.get("ZOO_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "zoo")
    return Path(root)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _marker(digest: str) -> Path:
    return cache_dir() / "verified" / f"{digest}.json"


def _stat_key(path: Path) -> dict:
    st = path.stat()
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}


def verify_file(path: str | os.PathLike, expected: str, *, name: str | None = None) -> None:
    """Raise ``WeightsCorrupt`` unless the file's sha256 is ``expected``; remember a success."""
    real = Path(os.path.realpath(path))
    marker = _marker(expected)
    try:
        key = _stat_key(real)
    except FileNotFoundError as exc:
        raise WeightsNotFound(f"{name or path}: file is missing ({path})") from exc
    try:
        if json.loads(marker.read_text()) == key:
            return
    except (OSError, ValueError):
        pass
    actual = sha256_file(real)
    if actual != expected:
        raise WeightsCorrupt(
            f"{name or path}: sha256 is {actual}, expected {expected}. The file is truncated or altered; "
            f"it was not loaded."
        )
    atomic_write_text(marker, json.dumps(key))


def evict(path: str | os.PathLike) -> None:
    """Remove a cached file (the blob and the snapshot link pointing at it)."""
    p = Path(path)
    real = Path(os.path.realpath(p))
    for target in {real, p}:
        try:
            target.unlink()
        except FileNotFoundError:
            pass
    log.warning("removed corrupt cache entry %s", real)


@dataclass(frozen=True)
class Fetched:
    """Files of one repo at one commit, on local disk."""

    repo: str
    commit: str
    paths: dict[str, Path]


def _commit_from_snapshot_path(path: str) -> str:
    parts = Path(path).parts
    if "snapshots" in parts:
        commit = parts[parts.index("snapshots") + 1]
        if is_commit(commit):
            return commit
    raise WeightsNotFound(f"cannot tell which commit {path} belongs to; is HF_HUB_CACHE a Hub cache?")


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's own error base classes (huggingface_hub uses httpx2, older ones httpx or requests)."""
    out = []
    for module, attr in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(getattr(mod, attr, None), type):
            out.append(getattr(mod, attr))
    return tuple(out)


def _download(repo: str, filename: str, revision: str, *, force: bool = False) -> str:
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return hf_hub_download(repo, filename, revision=revision, force_download=force)
    except LocalEntryNotFoundError as exc:
        raise WeightsNotFound(
            f"{repo}/{filename}@{revision} is not in the cache ({os.environ.get('HF_HUB_CACHE', '~/.cache/huggingface/hub')}) "
            f"and the Hub is unreachable or HF_HUB_OFFLINE=1. Fix: run once online "
            f"(`zoo create NAME --pretrained`), or point HF_ENDPOINT at a reachable hub such as `zoo hub serve`."
        ) from exc
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as exc:
        raise WeightsNotFound(f"{repo}/{filename}@{revision}: {type(exc).__name__}: {exc}") from exc
    except (OSError, HfHubHTTPError, *_transport_errors()) as exc:  # cut connection, server error, full disk
        raise DownloadFailed(
            f"downloading {repo}/{filename}@{revision} from {constants.ENDPOINT} failed: {type(exc).__name__}: {exc}. "
            f"Nothing partial was put in the cache; run the same call again to resume."
        ) from exc


def fetch(repo: str, revision: str, files: dict[str, str | None]) -> Fetched:
    """Fetch ``files`` (name -> expected sha256 or None) from ``repo`` at one commit.

    With a commit ``revision`` and known hashes, cached files are used without any network call.
    Otherwise the first file resolves ``revision`` to a commit and the others are fetched at that
    same commit. Files with a known hash are verified; a cached file that fails is evicted and, when
    online, downloaded once more.
    """
    from huggingface_hub import try_to_load_from_cache

    paths: dict[str, Path] = {}
    commit = revision if is_commit(revision) else None
    for name, digest in files.items():
        cached = try_to_load_from_cache(repo, name, revision=commit) if commit else None
        path = cached if isinstance(cached, str) else None
        from_cache = path is not None
        if path is None:
            path = _download(repo, name, commit or revision)
            if commit is None:
                commit = _commit_from_snapshot_path(path)
        if digest is not None:
            try:
                verify_file(path, digest, name=f"{repo}/{name}@{commit}")
            except WeightsCorrupt:
                evict(path)
                if not from_cache or _offline():
                    raise
                log.warning("cached %s/%s was corrupt; downloading it again", repo, name)
                path = _download(repo, name, commit, force=True)
                try:
                    verify_file(path, digest, name=f"{repo}/{name}@{commit}")
                except WeightsCorrupt:
                    evict(path)
                    raise
        paths[name] = Path(path)
    return Fetched(repo=repo, commit=commit or revision, paths=paths)


def read_state_dict(path: str | os.PathLike, *, allow_pickle: bool = False) -> dict:
    """Read a weight file: safetensors always; pickle only with ``allow_pickle`` and ``weights_only=True``."""
    path = Path(path)
    if path.suffix in PICKLE_SUFFIXES:
        if not allow_pickle:
            raise WeightsCorrupt(
                f"{path.name} is a pickle checkpoint; zoo loads safetensors only. Convert it once "
                f"(`zoo convert`), or pass allow_pickle=True to load it with torch.load(weights_only=True)."
            )
        import torch

        return torch.load(path, map_location="cpu", weights_only=True)
    check_safetensors_header(path)
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except Exception as exc:  # safetensors raises its own error types for every malformed file
        raise WeightsCorrupt(f"{path}: not a readable safetensors file ({exc})") from exc


def check_safetensors_header(path: Path) -> None:
    """Refuse a file whose header length or JSON is malformed before handing it to safetensors."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise WeightsCorrupt(f"{path}: too short to be a safetensors file ({size} bytes)")
        n = int.from_bytes(raw, "little")
        if n > MAX_HEADER_BYTES or 8 + n > size:
            raise WeightsCorrupt(f"{path}: safetensors header claims {n} bytes, file has {size}")
        try:
            header = json.loads(f.read(n))
        except ValueError as exc:
            raise WeightsCorrupt(f"{path}: safetensors header is not valid JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise WeightsCorrupt(f"{path}: safetensors header is not a JSON object")


def load_into(model, path: str | os.PathLike, *, allow_pickle: bool = False) -> None:
    """Load a weight file into ``model`` strictly; tied weights saved once are restored to both names."""
    import torch

    state = read_state_dict(path, allow_pickle=allow_pickle)
    own = model.state_dict()
    # Tensors sharing storage (tied weights) are stored once by save_pretrained; fill in the aliases.
    by_ptr: dict[tuple, list[str]] = {}
    for k, v in own.items():
        if v.device.type != "meta" and v.numel():
            by_ptr.setdefault((v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape)), []).append(k)
    for names in by_ptr.values():
        present = [n for n in names if n in state]
        if present and len(present) < len(names):
            for n in names:
                state.setdefault(n, state[present[0]])
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise WeightsMismatch(
            f"weights in {path} do not fit {type(model).__name__}: "
            f"missing keys {missing[:20]}{' ...' if len(missing) > 20 else ''}, "
            f"unexpected keys {unexpected[:20]}{' ...' if len(unexpected) > 20 else ''}"
        )
    bad = [k for k in own if tuple(own[k].shape) != tuple(state[k].shape)]
    if bad:
        raise WeightsMismatch(
            f"weights in {path} do not fit {type(model).__name__}: shape mismatch for "
            + ", ".join(f"{k} {tuple(state[k].shape)} vs {tuple(own[k].shape)}" for k in bad[:10])
        )
    with torch.no_grad():
        model.load_state_dict(state, strict=True)
