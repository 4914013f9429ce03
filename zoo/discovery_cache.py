"""A cache of what installed plugins registered, so listing 1,000 plugins imports none of them.

Safe to cache: the specs a regular (non-editable) installation registers cannot change without its
dist-info folder being rewritten, so each plugin's entry is keyed by its entry point, the dist-info
path and that folder's mtime. Editable installs are never cached (their code changes in place), nor
are broken plugins. Both files record which core wrote them (zoo's version and the mtimes of the
modules that decide their content): another core never reads them.

A cached entry names the code ``zoo create`` runs, so the cache is trusted only as far as its folder: the
folder is created 0700, and a folder or file owned by another user, or writable by group or others, is
neither read nor written (the slow path runs instead). Discovery also checks what a cached entry names as it
checks a fresh one (``plugin_ownership.check_targets``): the cache can make ``zoo list`` wrong, never run other code.

Two files per environment, Python version and zoo installation, in zoo's cache folder:

* the *specs* file (JSON, tuples tagged as such): every cached plugin's specs, read only when a caller
  needs specs (``load()``);
* the *index*: for every dist-info (and egg-info) folder on ``sys.path``, its mtime, its normalized
  distribution name and its ``zoo`` entry points, each with the names its plugin registers. ``scan()``
  walks ``sys.path`` as ``importlib.metadata.entry_points()`` does and reads a folder's
  ``entry_points.txt`` only when the index does not know the folder at its current mtime, so ``zoo list``
  costs one ``listdir`` per ``sys.path`` entry and one ``stat`` per installed distribution, without
  importing importlib.metadata (that import, with the email package it needs, costs more than all
  the rest of ``zoo list``). The index is written with ``marshal``, which every interpreter has loaded
  already (importing ``json`` would cost a tenth of ``zoo list``): it builds built-in types only (no
  class is looked up, nothing is called), and a value of the wrong shape sends discovery to the slow path.

Where an environment holds something only importlib.metadata handles exactly (a zip or an egg on
``sys.path``, another finder that provides distributions, an egg-info declaring zoo plugins, two
metadata folders of one distribution in one folder), ``scan()`` returns None and discovery takes the
slow path, which checks the scan against importlib.metadata before it writes an index.
"""
from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # `zoo list` imports this module: no typing import at run time
if TYPE_CHECKING:
    from typing import Any

FORMAT = 3
_CORE_FILES = ("specs.py", "discovery.py", "discovery_cache.py")  # what decides how cached specs are read


def cache_dir() -> str:
    """zoo's cache folder, as ``zoo.weights.cache_dir`` gives it (not imported: it pulls hashlib and tempfile)."""
    return os.environ.get("ZOO_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "zoo")


def _env_id() -> str:
    # one cache per environment and per copy of zoo in it (a source checkout next to the installed core would
    # otherwise overwrite each other's cache on every run); FNV-1a, so as not to import hashlib for it
    h = 0xCBF29CE484222325
    for byte in f"{sys.prefix}\0{os.path.dirname(os.path.abspath(__file__))}".encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"[:12]


def cache_file(kind: str = "specs") -> str:
    """The cache file (``"specs"`` or ``"index"``) of this environment, Python version and zoo installation."""
    name = f"plugins-py{sys.version_info[0]}{sys.version_info[1]}-{_env_id()}"
    return os.path.join(cache_dir(), f"{name}.json" if kind == "specs" else f"{name}-{kind}.marshal")


def core_stamp() -> list:
    """Which core writes and reads the cache: zoo's version and the mtimes of the modules that decide its content."""
    from . import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    stamp: list = [__version__]
    for name in _CORE_FILES:
        try:
            stamp.append(os.stat(os.path.join(here, name)).st_mtime_ns)
        except OSError:
            stamp.append(None)
    return stamp


def key(name: str, value: str, dist_path: str, mtime_ns: int | None = None) -> tuple | None:
    """The cache key of one entry point: (name, value, absolute dist-info path, its mtime); None if it is gone."""
    path = os.path.abspath(dist_path)
    if mtime_ns is None:
        try:
            mtime_ns = os.stat(path).st_mtime_ns
        except OSError:
            return None
    return (name, value, path, mtime_ns)


def fingerprint(ep) -> tuple | None:
    """``key()`` of an ``importlib.metadata`` entry point of a regular install; None when it must not be cached."""
    path = getattr(ep.dist, "_path", None)
    if path is None:
        return None
    path = str(path)
    import json

    try:
        with open(os.path.join(path, "direct_url.json"), encoding="utf-8") as f:
            if json.load(f).get("dir_info", {}).get("editable"):
                return None
    except FileNotFoundError:
        pass
    except (OSError, ValueError, AttributeError):
        return None
    return key(ep.name, ep.value, path)


def name_version(dist_path: str) -> tuple[str | None, str | None]:
    """Distribution name and version from a ``NAME-VERSION.dist-info`` folder name, without parsing METADATA."""
    base = os.path.basename(os.path.normpath(str(dist_path)))
    if base.endswith(".dist-info"):
        name, sep, version = base[: -len(".dist-info")].partition("-")
        if sep:
            return name.replace("_", "-").replace(".", "-").lower(), version
    return None, None


def dist_name_version(ep) -> tuple[str | None, str | None]:
    """Distribution name and version of an ``importlib.metadata`` entry point (from the folder name when it can)."""
    path = getattr(ep.dist, "_path", None)
    if path is not None:
        name, version = name_version(str(path))
        if name is not None:
            return name, version
    if ep.dist is None:
        return None, None
    return ep.dist.name, ep.dist.version


def _normalize(stem: str) -> str:
    """importlib.metadata's key for a metadata folder (lowercased, runs of - _ . as one _), without re."""
    name = stem.lower().rpartition(".")[0].partition("-")[0].replace("-", "_").replace(".", "_")
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _entry_points(path: str, group: str) -> list[list[str]] | None:
    """[name, value] of ``group`` in a metadata folder's entry_points.txt, parsed as importlib.metadata parses it.

    None for a line importlib.metadata would reject (no ``=``), so that the slow path reports it.
    """
    try:
        with open(os.path.join(path, "entry_points.txt"), "rb") as f:
            data = f.read()
    except OSError:
        return []
    if f"[{group}]".encode() not in data:
        return []
    out = []
    section = None
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section == group:
            name, sep, value = line.partition("=")
            if not sep:
                return None
            out.append([name.strip(), value.strip()])
    return out


def _plain_finders() -> bool:
    """True when importlib.metadata would ask only the standard path finder for distributions."""
    path_finder = sys.modules["_frozen_importlib_external"].PathFinder
    return all(f is path_finder or getattr(f, "find_distributions", None) is None for f in sys.meta_path)


def scan(group: str, index: dict) -> tuple[list[tuple], dict] | None:
    """The entry points of ``group`` as ``importlib.metadata.entry_points(group=...)`` finds them, and a new index.

    Returns ``(found, folders)``: ``found`` lists ``(name, value, absolute dist-info path, its mtime, summary)``
    in importlib.metadata's order (``sys.path`` in order, the first distribution of a name wins; ``summary``
    is what the index says the plugin registers, or None), and ``folders`` is the index content for what was
    seen. ``index`` is the last index written (``load_index()``): a folder it knows at the same mtime is not
    read again. None when the environment needs importlib.metadata itself (see the module docstring).
    """
    if not _plain_finders():
        return None
    seen: set[str] = set()
    found: list[tuple] = []
    folders: dict[str, dict] = {}
    for root in sys.path:
        if not isinstance(root, str) or os.path.basename(root).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root or ".")
        except FileNotFoundError:
            continue
        except NotADirectoryError:
            return None  # a zip on sys.path may hold dist-info folders
        except OSError:
            continue  # unreadable: importlib.metadata finds nothing there either
        absroot = os.path.abspath(root)
        known = index.get(absroot) or {}
        records: dict[str, list] = {}
        here: set[str] = set()
        for child in children:
            low = child.lower()
            is_dist_info = low.endswith(".dist-info")
            if not is_dist_info and not low.endswith(".egg-info"):
                continue
            path = absroot + os.sep + child
            try:
                mtime = os.stat(path).st_mtime_ns
            except OSError:
                continue
            record = known.get(child)
            if record is None or record[0] != mtime:
                eps = _entry_points(path, group)
                if eps is None:
                    return None
                record = [mtime, _normalize(child), [[name, value, None] for name, value in eps]]
            records[child] = record
            dist = record[1]
            if dist in here:
                return None  # two of one distribution in one folder: which wins is importlib.metadata's to say
            here.add(dist)
            if not record[2] or dist in seen:
                continue  # no plugin here, or shadowed by the same distribution earlier on sys.path
            if not is_dist_info:
                return None  # an egg-info's name and version come from its PKG-INFO
            found.extend((name, value, path, mtime, summary) for name, value, summary in record[2])
        seen |= here
        folders[absroot] = records
    return found, folders


def summary(raw: dict) -> list | None:
    """What the index keeps of one plugin's cached specs: ``[[model, task, [tags]], ...], [task, ...]``."""
    try:
        models = [[s["name"], s.get("task"), list(s.get("weights") or ())] for s in raw["zoo_models"]]
        tasks = [s["name"] for s in raw["zoo_tasks"]]
        if not isinstance(raw["zoo_claims"], list) or not isinstance(raw.get("zoo_tools"), list):
            return None
    except (TypeError, KeyError, AttributeError):
        return None
    return [models, tasks]


def _decode(obj: Any, types: dict) -> Any:
    if isinstance(obj, dict):
        if "__tuple__" in obj:
            return tuple(_decode(v, types) for v in obj["__tuple__"])
        if "__spec__" in obj:
            kind = types[obj["__spec__"]]
            return kind(**{k: _decode(v, types) for k, v in obj.items() if k != "__spec__"})
        return {k: _decode(v, types) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v, types) for v in obj]
    return obj


def _trusted(st: os.stat_result) -> bool:
    """True for a cache folder or file this user owns and nobody else can write (a cached entry is code to run)."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # no POSIX owners (Windows): the folder's ACL is the user's business
        return True
    return st.st_uid == geteuid() and not st.st_mode & 0o022


def _read(kind: str) -> dict | None:
    try:
        if not _trusted(os.stat(cache_dir())):
            return None  # a folder others can write (or another user's): its files prove nothing
        with open(cache_file(kind), "rb") as f:
            if not _trusted(os.fstat(f.fileno())):  # the file we read, not a name that could change meanwhile
                return None
            raw = f.read()
        if kind == "index":
            data = marshal.loads(raw)
        else:
            import json  # here, not at the top: listing from the index never needs it

            data = json.loads(raw)
        if data.get("format") == FORMAT and data.get("core") == core_stamp():
            return data
    except (OSError, ValueError, TypeError, EOFError, AttributeError):
        pass
    return None


def load() -> dict[tuple, dict[str, list]]:
    """The cached specs by key; empty when the file is missing, damaged, or written by another core."""
    data = _read("specs")
    try:
        return {tuple(k): v for k, v in data["entries"]} if data else {}
    except (KeyError, TypeError, ValueError):
        return {}


def load_index() -> dict[str, dict[str, list]]:
    """The index: absolute ``sys.path`` folder -> metadata folder name -> [mtime, distribution key, entry points]."""
    data = _read("index")
    folders = data.get("folders") if data else None
    return folders if isinstance(folders, dict) else {}  # the rest is checked where it is used (see discovery)


def decode_entry(raw: dict[str, list]) -> dict[str, list] | None:
    """One plugin's specs from their JSON form, or None when they do not decode."""
    from .specs import ClaimSpec, ModelSpec, Paper, TaskSpec, ToolSpec, WeightsSpec

    types = {c.__name__: c for c in (Paper, WeightsSpec, ModelSpec, TaskSpec, ClaimSpec, ToolSpec)}
    try:
        return {hook: [_decode(s, types) for s in items] for hook, items in raw.items()}
    except (TypeError, ValueError, KeyError, AttributeError):
        return None


def encode_entry(found: dict[str, list]) -> dict | None:
    """The JSON form of one plugin's specs, or None when they hold values JSON cannot carry."""
    import json
    from dataclasses import fields, is_dataclass  # here: `zoo list` never imports dataclasses
    from types import MappingProxyType

    def encode(obj: Any) -> Any:
        if is_dataclass(obj):
            return {"__spec__": type(obj).__name__, **{f.name: encode(getattr(obj, f.name)) for f in fields(obj)}}
        if isinstance(obj, (dict, MappingProxyType)):
            if not all(isinstance(k, str) for k in obj):
                raise TypeError("only string keys are cacheable")
            return {k: encode(v) for k, v in obj.items()}
        if isinstance(obj, tuple):
            return {"__tuple__": [encode(v) for v in obj]}
        if isinstance(obj, list):
            return [encode(v) for v in obj]
        if obj is None or isinstance(obj, (str, int, float, bool)):
            return obj
        raise TypeError(f"{type(obj).__name__} is not cacheable")

    try:
        encoded = {hook: [encode(s) for s in items] for hook, items in found.items()}
        json.dumps(encoded, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return encoded


def _private_dir() -> str | None:
    """The cache folder, created 0700 when missing; None when it is another user's or others can write it."""
    folder = cache_dir()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        os.makedirs(os.path.dirname(os.path.abspath(folder)), exist_ok=True)
        os.mkdir(folder, 0o700)
    return folder if _trusted(os.stat(folder)) else None


def _write(kind: str, content: dict) -> None:
    import json

    data = {"format": FORMAT, "core": core_stamp(), **content}
    path = cache_file(kind)
    tmp = None
    try:
        folder = _private_dir()
        if folder is None:
            raise PermissionError(f"{cache_dir()} is not this user's alone (owner or group/world write): not written")
        payload = marshal.dumps(data) if kind == "index" else json.dumps(data).encode("utf-8")
        # 0600 whatever the umask (a group-writable cache file would be refused on reading), written then renamed
        # so that a reader sees the old file or the new one; no fsync: a torn cache file only costs the slow path
        tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:  # a read-only or shared cache dir only costs speed
        import logging

        logging.getLogger(__name__).debug("cannot write plugin cache %s: %s", path, exc)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def save(entries: dict[tuple, dict]) -> None:
    """Write the (already encoded) specs atomically."""
    _write("specs", {"entries": [[list(k), v] for k, v in entries.items()]})


def save_index(folders: dict[str, dict[str, list]]) -> None:
    """Write the index (``index_content()``) atomically, after the specs it refers to."""
    _write("index", {"folders": folders})


def index_content(folders: dict[str, dict[str, list]], entries: dict[tuple, dict]) -> dict[str, dict[str, list]]:
    """``scan()``'s folders with each plugin's summary taken from ``entries`` (the specs saved with it)."""
    for absroot, records in folders.items():
        for child, (mtime, _dist, eps) in records.items():
            for ep in eps:
                raw = entries.get((ep[0], ep[1], absroot + os.sep + child, mtime))
                ep[2] = None if raw is None else summary(raw)
    return folders
