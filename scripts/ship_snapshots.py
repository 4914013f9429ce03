"""Train pretrained tags with their recipes and ship the result inside the plugin's own distribution.

    python scripts/ship_snapshots.py                       # every tag with a recipe, from a checkout's root
    python scripts/ship_snapshots.py mrl_digits_cnn.digits --max-bytes 4000000

For each tag: ``zoo.train(NAME.TAG)`` (recorded in ./registry.yaml), the Hub-format folder (config.json,
model.safetensors, card) written to ``plugins/<id>/<package>/weights/<NAME.TAG>/``, and the plugin's
``plugin.py`` given ``snapshot="<package>:weights/<NAME.TAG>"`` and the two files' sha256 in ``files=``. The
installed plugin then loads that tag offline, verified, with no Hub (``WeightsSpec.snapshot``). A tag whose
weights exceed ``--max-bytes`` is not shipped (it stays Hub-only; ``zoo info`` says how to train it).
Reinstall the plugin afterwards (``./dev install``) to use its new snapshot.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 2_000_000  # per tag: a plugin wheel stays small; the Hub holds anything larger


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pin(plugin_py: Path, repo: str, snapshot: str, files: dict[str, str]) -> None:
    """Give the ``WeightsSpec(repo=REPO, ...)`` in ``plugin_py`` this snapshot and these pins (replacing old ones)."""
    text = plugin_py.read_text()
    anchor = re.search(rf'(?P<indent>[ \t]*)(?P<head>.*?)repo="{re.escape(repo)}",', text)
    if anchor is None:
        raise SystemExit(f"{plugin_py}: no WeightsSpec(repo=\"{repo}\", ...) to pin")
    after = text[anchor.end():]
    after = re.sub(r'^\s*snapshot="[^"]*",\s*files=\{[^}]*\},', "", after, count=1)
    indent = " " * (len(anchor.group("indent")) + len(anchor.group("head")))
    pins = f",\n{indent}       ".join(f'"{k}": "{v}"' for k, v in files.items())
    insert = f'\n{indent}snapshot="{snapshot}",\n{indent}files={{{pins}}},'
    rest = after.lstrip(" ")
    plugin_py.write_text(text[:anchor.end()] + insert + ("" if rest.startswith("\n") else f"\n{indent}") + rest)


def ship(name: str, max_bytes: int) -> str:
    import zoo
    from zoo import hubformat, registry

    spec, plugin_id, tag = registry.lookup(name)
    w = spec.weights[tag]
    status = registry.catalog().statuses[plugin_id]
    package = (status.module or "").split(".")[0]
    source = ROOT / "plugins" / plugin_id / package
    if not source.is_dir():
        raise SystemExit(f"{name}: {source} is not in this checkout (run from the zoo repository's root)")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        trained = zoo.train(name, out=Path(tmp) / "snap", record=ROOT / "registry.yaml")
        folder = trained.folder
        size = (folder / hubformat.WEIGHTS_NAME).stat().st_size
        if size > max_bytes:
            return f"{name}: {size:,} bytes > {max_bytes:,}: not shipped (Hub only; `zoo train {name} --push`)"
        files = {n: _sha256(folder / n) for n in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME)}
        dest = source / "weights" / name
        hubformat.write_folder(dest, {n: folder / n for n in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME,
                                                              hubformat.CARD_NAME)})
    dest.chmod(0o755)
    pin(source / "plugin.py", w.repo, f"{package}:weights/{name}", files)
    return (f"{name}: shipped {size:,} bytes in {dest.relative_to(ROOT)} ({time.perf_counter() - t0:.0f} s); "
            f"sha256 {files[hubformat.WEIGHTS_NAME][:12]}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="NAME.TAG (default: every tag with a recipe)")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES, help=f"largest weight file shipped (default {MAX_BYTES:,})")
    a = p.parse_args(argv)
    import zoo
    from zoo import registry

    names = a.names or [n for n in zoo.list_models(pretrained=True)
                        if registry.lookup(n)[0].weights[n.split(".", 1)[1]].recipe is not None]
    for name in names:
        print(f"training {name} ...", file=sys.stderr, flush=True)
        print(ship(name, a.max_bytes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
