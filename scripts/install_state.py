"""Which of the repository's distributions changed since ``./dev`` last installed them (standard library only).

    python scripts/install_state.py changed DIR...   # prints the DIRs to (re)install, one per line
    python scripts/install_state.py mark DIR...      # records them as installed as they are now

A distribution's fingerprint is the sha256 of the relative path, size and modification time of every file
in its folder (caches and build leftovers excepted; for the repository root, the core's ``zoo/`` and its
metadata files only). ``mark`` writes the fingerprints to ``$VENV/.zoo-installed.json`` (``VENV`` defaults to ``.venv``)
atomically, after pip succeeded; the venv's Python must still be the one they were installed into.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

SKIP = {"__pycache__", "build", "dist", ".pytest_cache", ".ruff_cache", ".venv", ".git", "demo-out", "out"}


def _files(folder: Path):
    if (folder / "zoo" / "__init__.py").exists():  # the repository root: the core is zoo/ and its metadata
        yield from (folder / n for n in ("pyproject.toml", "README.md", "LICENSE") if (folder / n).exists())
        folder = folder / "zoo"
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP and not d.endswith(".egg-info"))
        yield from (Path(dirpath) / n for n in sorted(filenames))


def fingerprint(folder: Path) -> str:
    h = hashlib.sha256()
    for path in _files(folder.resolve()):
        st = path.stat()
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _state_path() -> Path:
    return Path(os.environ.get("VENV", ".venv")) / ".zoo-installed.json"


def _load() -> dict:
    try:
        data = json.loads(_state_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("python") == sys.executable else {}


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] not in ("changed", "mark"):
        print(__doc__, file=sys.stderr)
        return 2
    state = _load()
    dists = state.get("dists", {})
    if argv[0] == "changed":
        for d in argv[1:]:
            if dists.get(d) != fingerprint(Path(d.split("[")[0])):
                print(d)
        return 0
    for d in argv[1:]:
        dists[d] = fingerprint(Path(d.split("[")[0]))
    path = _state_path()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"python": sys.executable, "dists": dists}, indent=1, sort_keys=True))
    os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
