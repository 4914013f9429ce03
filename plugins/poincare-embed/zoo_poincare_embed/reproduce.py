"""``zoo reproduce poincare-embed``: Poincaré vs Euclidean reconstruction at d = 2, 5, 10.

On the WordNet mammal closure (1180 nouns, 6540 pairs; the task's ``describe()`` records the source)
both geometries get the same loss (Eq. 6), initialisation, negatives, batches, burn-in and epochs, and
each its best learning rate of one grid by MAP, per seed (the reconstruction setting evaluates on the
training pairs). ``graph_embed.evaluate`` scores them, and the spectral rows (``build_baseline``).
"""
from __future__ import annotations

import functools
import math

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_graph_embed import task

from .plugin import CLAIM

# the grid spans both geometries' best learning rates with room on each side (issue 14: the former grid ended at 10,
# where Poincaré's best lay; 30 is its best at d = 10 after 40 epochs, 100 already worse)
HIERARCHY, DIMS, LRS = "mammal", (2, 5, 10), (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
QUICK = {"tree": {"branching": 3, "depth": 3}, "lrs": (3.0,)}  # a 40-node tree, one learning rate
MODELS = {"Poincaré": "poincare_embed", "Euclidean": "euclidean_embed"}


def _closure(quick: bool) -> task.GraphData:
    name = "synthetic" if quick else HIERARCHY
    edges, n, names = task.load_hierarchy(name, **(QUICK["tree"] if quick else {}))
    return task.GraphData(edges, n, tuple(names), True, name)


def geometry_row(*, seed: int, quick: bool, steps: int, model: str, dim: int) -> dict[str, float]:
    """``model`` at ``dim`` trained for ``steps`` epochs at each learning rate; the row of the best MAP."""
    closure = _closure(quick)
    best = {"mean_rank": math.nan, "map": math.nan, "lr": math.nan, "final_loss": math.nan}
    for lr in QUICK["lrs"] if quick else LRS:
        torch.manual_seed(seed)
        net = zoo.create(model, num_nodes=closure.num_nodes, dim=dim, lr=lr, epochs=steps)
        res = zoo.evaluate(net, data=closure, seed=seed, baselines=[])
        row = {"mean_rank": res.metrics["mean_rank"], "map": res.metrics["map"], "lr": lr,
               "final_loss": res.metrics["final_train_loss"]}
        diverged = not (math.isfinite(row["map"]) and math.isfinite(row["final_loss"]))
        if not diverged and (math.isnan(best["map"]) or row["map"] > best["map"]):
            best = row
    return best


def spectral_row(*, seed: int, quick: bool, dim: int) -> dict[str, float]:
    """The task's spectral embedding of the closure at ``dim``, ranked like the models (the same for every seed)."""
    return dict(_spectral(quick, dim))


@functools.lru_cache(maxsize=8)
def _spectral(quick: bool, dim: int) -> dict[str, float]:
    closure = _closure(quick)  # eigenvectors are deterministic: one dense eigensolve per dimension, not per seed
    spectral = task.build_baseline("spectral", num_nodes=closure.num_nodes, dim=dim)
    return task.evaluate(spectral, protocol="reconstruction", data=closure, baselines=[]).metrics


REPRODUCTION = Claim(
    plugin="poincare-embed", claim=CLAIM, task="graph_embed", steps=40, quick_steps=2, seeds=(0, 1, 2),
    rows=[row for d in DIMS for row in (
        *(Row(f"{label} d={d}", geometry_row, {"model": model, "dim": d}) for label, model in MODELS.items()),
        Row(f"spectral d={d}", spectral_row, {"dim": d}))],
    checks=[check for d in DIMS for check in (
        Check(f"Poincaré d={d}", "mean_rank", baseline=f"Euclidean d={d}", higher=False),
        Check(f"Poincaré d={d}", "map", baseline=f"Euclidean d={d}"))],
    settings={"hierarchy": HIERARCHY, "lrs": list(LRS), "lr_choice": "best MAP per row and seed"},
    notes="margin 0: the paper claims lower mean rank and higher MAP than Euclidean at low dimension, not by how "
          "much; one check per metric and dimension, all must hold; the spectral rows and lr are reported only",
)
