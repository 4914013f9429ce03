"""A cache of what installed plugins registered, so listing 1,000 plugins imports none of them.

Safe to cache: the specs a regular (non-editable) installation registers cannot change without its
dist-info folder being rewritten, so each entry is keyed by the entry point, the dist-info path and
its mtime. Editable installs are never cached (their code changes in place), nor are broken plugins.
The file is JSON (tuples tagged as such): nothing in it is ever executed.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .specs import ClaimSpec, ModelSpec, Paper, TaskSpec, WeightsSpec

log = logging.getLogger(__name__)

_TYPES = {c.__name__: c for c in (Paper, WeightsSpec, ModelSpec, TaskSpec, ClaimSpec)}
FORMAT = 1


def cache_file() -> Path:
    from .weights import cache_dir

    import hashlib

    env = hashlib.sha1(sys.prefix.encode()).hexdigest()[:12]  # one cache per environment
    return cache_dir() / f"plugins-py{sys.version_info[0]}{sys.version_info[1]}-{env}.json"


def fingerprint(ep) -> tuple | None:
    """(entry point, dist-info path, mtime) for a regular install; None when it must not be cached."""
    path = getattr(ep.dist, "_path", None)
    if path is None:
        return None
    path = Path(path)
    try:
        direct = path / "direct_url.json"
        if direct.exists() and json.loads(direct.read_text()).get("dir_info", {}).get("editable"):
            return None
        return (ep.name, ep.value, str(path), path.stat().st_mtime_ns)
    except (OSError, ValueError):
        return None


def dist_name_version(ep) -> tuple[str | None, str | None]:
    """Distribution name and version from the dist-info folder name, without parsing METADATA."""
    path = getattr(ep.dist, "_path", None)
    if path is not None and str(path).endswith(".dist-info"):
        stem = Path(path).name[: -len(".dist-info")]
        name, sep, version = stem.partition("-")
        if sep:
            return name.replace("_", "-").replace(".", "-").lower(), version
    if ep.dist is None:
        return None, None
    return ep.dist.name, ep.dist.version


def _encode(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {"__spec__": type(obj).__name__,
                **{f.name: _encode(getattr(obj, f.name)) for f in dataclasses.fields(obj)}}
    if isinstance(obj, (dict, MappingProxyType)):
        if not all(isinstance(k, str) for k in obj):
            raise TypeError("only string keys are cacheable")
        return {k: _encode(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"{type(obj).__name__} is not cacheable")


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if "__tuple__" in obj:
            return tuple(_decode(v) for v in obj["__tuple__"])
        if "__spec__" in obj:
            kind = _TYPES[obj["__spec__"]]
            return kind(**{k: _decode(v) for k, v in obj.items() if k != "__spec__"})
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def load() -> dict[tuple, dict[str, list]]:
    try:
        data = json.loads(cache_file().read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return {}
        return {tuple(k): v for k, v in data["entries"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def decode_entry(raw: dict[str, list]) -> dict[str, list] | None:
    try:
        return {hook: [_decode(s) for s in items] for hook, items in raw.items()}
    except (TypeError, ValueError, KeyError):
        return None


def encode_entry(found: dict[str, list]) -> dict | None:
    """The JSON form of one plugin's specs, or None when they hold values JSON cannot carry."""
    try:
        encoded = {hook: [_encode(s) for s in items] for hook, items in found.items()}
        json.dumps(encoded, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return encoded


def save(entries: dict[tuple, dict]) -> None:
    """Write the (already encoded) entries atomically."""
    path = cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"format": FORMAT, "entries": [[list(k), v] for k, v in entries.items()]}),
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only cache dir only costs speed
        log.debug("cannot write plugin cache %s: %s", path, exc)
