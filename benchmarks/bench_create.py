"""create overhead: ``zoo.create("mrl_resnet18")`` against ``timm.create_model("resnet18")`` in one process.

Three sides, interleaved in a rotating order after a warm-up, many repetitions:

* ``zoo``: ``zoo.create("mrl_resnet18")`` (the mrl plugin, installed editable in the venv);
* ``timm``: ``timm.create_model("resnet18")``, the same backbone with timm's single classifier;
* ``builder``: ``zoo_mrl.model.mrl_resnet18()``, the plugin's builder called directly, without zoo.

``zoo / timm`` is the figure the issue asks for; it includes the MRL heads (7 nested classifiers,
about 1.0 M parameters against timm's 0.5 M). ``zoo / builder`` is zoo's own overhead (lookup,
argument check, provenance) on exactly the same model.

Run alone: ``.venv/bin/python benchmarks/bench_create.py --reps 30 --out /tmp/create.json``.
"""
from __future__ import annotations

import argparse
import json
import logging
import time

log = logging.getLogger("bench.create")


def measure(reps: int, warmup: int) -> dict:
    import timm
    import torch

    import zoo
    from zoo_mrl.model import mrl_resnet18

    sides = {
        "zoo": lambda: zoo.create("mrl_resnet18"),
        "timm": lambda: timm.create_model("resnet18"),
        "builder": lambda: mrl_resnet18(),
    }
    params = {}
    for name, fn in sides.items():
        for _ in range(warmup):
            m = fn()
        params[name] = sum(p.numel() for p in m.parameters())
        del m
    times: dict[str, list[float]] = {k: [] for k in sides}
    names = list(sides)
    for r in range(reps):
        order = names[r % 3:] + names[:r % 3]
        for name in order:
            t0 = time.perf_counter()
            m = sides[name]()
            times[name].append(time.perf_counter() - t0)
            del m
    return {"times": times, "params": params, "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "timm": timm.__version__}


def run(work, reps: int = 30, warmup: int = 2) -> dict:
    """Run the measurement in a child process with a hermetic environment; summarise it."""
    from common import DEAD_ENDPOINT, hub_env, paired, run_child, summary

    env = hub_env(work, DEAD_ENDPOINT, zoo_cache="zoo-cache-create")
    raw = run_child("bench_create.py", ["--reps", str(reps), "--warmup", str(warmup)], env, "create benchmark")
    out = {"reps": reps, "params": raw["params"], "torch_threads": raw["torch_threads"],
           "sides": {k: summary(v) for k, v in raw["times"].items()}}
    med = {k: v["median"] for k, v in out["sides"].items()}
    out["zoo_over_timm"] = med["zoo"] / med["timm"]
    out["zoo_over_builder"] = med["zoo"] / med["builder"]
    out["builder_over_timm"] = med["builder"] / med["timm"]
    t = raw["times"]
    out["zoo_over_timm_paired"] = paired(t["zoo"], t["timm"])
    out["zoo_over_builder_paired"] = paired(t["zoo"], t["builder"])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    with open(a.out, "w") as f:
        json.dump(measure(a.reps, a.warmup), f)


if __name__ == "__main__":
    main()
