"""Verified loads, old and new side by side (issue 12): the cost of a pinned cached load, and what loads
while another process swaps the file.

    .venv/bin/python benchmarks/bench_weights.py [--old-rev 6c81dfe] [--reps 10] [--swap-loads 300]

"old" is ``zoo/weights.py`` at ``--old-rev`` (``git show``; it hashed the file, kept a size/mtime/inode marker,
then let safetensors read the file again); "new" is the installed ``zoo.weights`` (one read, hashed, loaded
from those bytes). Both load the same files into the same module in this process, interleaved round by round.

- cached load: a 102 MB ResNet-50 state dict (timm), verified against its sha256 and loaded; raw safetensors
  ``load_file`` + ``load_state_dict`` beside them;
- swapper: a second process replaces a small weights file, as fast as it can, by another valid file with
  different weights and back; each side loads it ``--swap-loads`` times with the good file's sha256 and counts
  loads that returned the verified weights, loads that returned OTHER weights (the failure), and refusals.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD_REV = "6c81dfe"  # before the issue-12 weights hardening
SWAPPER = r"""
import os, sys
target, good, bad, stop = sys.argv[1:5]
blobs = [open(good, "rb").read(), open(bad, "rb").read()]
i = 0
while not os.path.exists(stop):
    with open(target + ".swap", "wb") as f:
        f.write(blobs[i % 2])
    os.replace(target + ".swap", target)
    i += 1
with open(target + ".swap", "wb") as f:
    f.write(blobs[0])
os.replace(target + ".swap", target)
"""


def old_weights(rev: str) -> types.ModuleType:
    src = subprocess.run(["git", "show", f"{rev}:zoo/weights.py"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.replace("from .errors import", "from zoo.errors import")
    module = types.ModuleType("zoo_weights_old")
    sys.modules[module.__name__] = module
    exec(compile(src, f"zoo/weights.py@{rev}", "exec"), module.__dict__)
    return module


def run(work: Path, old_rev: str = OLD_REV, reps: int = 10, swap_loads: int = 300) -> dict:
    import os

    os.environ.setdefault("ZOO_CACHE_DIR", str(work / "zoo-cache"))
    import timm
    import torch
    from safetensors.torch import load_file, save_file

    import zoo.weights as new

    old = old_weights(old_rev)
    torch.manual_seed(0)
    model = timm.create_model("resnet50")
    path = work / "model.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    digest = new.sha256_file(path)
    sides = {"old": lambda: (old.verify_file(path, digest), old.load_into(model, path)),
             "new": lambda: new.load_into(model, new.read_verified(path, digest)),
             "raw": lambda: model.load_state_dict(load_file(str(path)))}
    for fn in sides.values():
        fn()  # warm (the old side writes its marker here)
    times: dict[str, list[float]] = {k: [] for k in sides}
    for r in range(reps):
        for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            t0 = time.perf_counter()
            sides[name]()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}

    small = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 10))
    target, good, bad = work / "s.safetensors", work / "good", work / "bad"
    save_file(small.state_dict(), str(good))
    save_file({k: torch.full_like(v, 0.25) for k, v in small.state_dict().items()}, str(bad))
    target.write_bytes(good.read_bytes())
    d2 = new.sha256_file(good)
    ref = {k: v.clone() for k, v in small.state_dict().items()}
    swap: dict[str, dict[str, int]] = {}
    for name, load in (("old", lambda: (old.verify_file(target, d2), old.load_into(small, target))),
                       ("new", lambda: new.load_into(small, new.read_verified(target, d2)))):
        stop = work / f"stop-{name}"
        proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(target), str(good), str(bad), str(stop)])
        counts = {"verified": 0, "other_weights": 0, "refused": 0}
        try:
            for _ in range(swap_loads):
                try:
                    load()
                except Exception:  # noqa: BLE001 - a refusal is the right outcome under a swapper
                    counts["refused"] += 1
                    continue
                same = all(torch.equal(small.state_dict()[k], ref[k]) for k in ref)
                counts["verified" if same else "other_weights"] += 1
        finally:
            stop.touch()
            proc.wait()
        swap[name] = counts
    return {"old_rev": old_rev, "file_mb": path.stat().st_size / 1e6, "reps": reps, "swap_loads": swap_loads,
            "load_s": {k: {"median": v, "n": len(times[k])} for k, v in med.items()},
            "new_over_old": med["new"] / med["old"], "new_over_raw": med["new"] / med["raw"], "swap": swap}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old-rev", default=OLD_REV)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--swap-loads", type=int, default=300)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-weights-") as tmp:
        print(json.dumps(run(Path(tmp), a.old_rev, a.reps, a.swap_loads), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
