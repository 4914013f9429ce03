"""``zoo reproduce poincare-embed``: Poincaré vs Euclidean reconstruction at d = 2, 5, 10.

The hierarchy is the WordNet mammal closure (graph_embed ``load_hierarchy("mammal")``; 1180 nouns,
6540 pairs; the synthetic tree when WordNet is missing, recorded in the settings). Both geometries
get the same loss (Eq. 6), initialisation, 10 negatives, batches, burn-in (10 epochs at lr / 10)
and number of epochs, and each gets its best learning rate from the same grid, judged by MAP as
the paper's reconstruction setting allows (the evaluation pairs are the training pairs). Scores
come from ``graph_embed.evaluate`` (mean rank and MAP over all 6540 pairs), which also reports the
spectral embedding of the closure at the same dimension.
"""
from __future__ import annotations

import logging
import math
import time

from .plugin import CLAIM

log = logging.getLogger(__name__)

DIMS, LRS, EPOCHS = (2, 5, 10), (0.3, 1.0, 3.0, 10.0), 40
QUICK = {"dims": (2,), "lrs": (3.0,), "epochs": 2}
MODELS = (("Poincaré", "poincare_embed"), ("Euclidean", "euclidean_embed"))


def reproduce(quick: bool = False) -> "zoo.ClaimResult":  # noqa: F821 - zoo imported lazily
    """Fit both geometries at each dimension and learning rate; rows ``<geometry> d=<d>`` (best lr)."""
    import torch

    import zoo
    from zoo_task_graph_embed import task

    dims, lrs, epochs = (QUICK["dims"], QUICK["lrs"], QUICK["epochs"]) if quick else (DIMS, LRS, EPOCHS)
    hierarchy = "mammal"
    source = "wordnet mammal closure" if task.wordnet_dir() is not None else "synthetic tree (WordNet missing)"
    _, n, _ = task.load_hierarchy(hierarchy)
    t0 = time.perf_counter()
    table: dict[str, dict[str, float]] = {}
    sweep: dict[str, dict[str, dict[str, float]]] = {}
    for dim in dims:
        spectral = None
        for label, name in MODELS:
            best = None
            for lr in lrs:
                torch.manual_seed(0)
                model = zoo.create(name, num_nodes=n, dim=dim, lr=lr, epochs=epochs)
                res = zoo.evaluate(model, hierarchy=hierarchy, seed=0, baselines=[] if spectral else ["spectral"])
                spectral = spectral or res.baselines.get("spectral")
                m = {"mean_rank": res.metrics["mean_rank"], "map": res.metrics["map"], "lr": lr,
                     "final_loss": res.metrics["final_train_loss"]}
                sweep.setdefault(f"{label} d={dim}", {})[f"lr={lr:g}"] = m
                if math.isfinite(m["map"]) and math.isfinite(m["final_loss"]) and (best is None or m["map"] > best["map"]):
                    best = m
                log.info("%s d=%d lr=%g: mean rank %.2f, MAP %.3f (%.0f s)", label, dim, lr, m["mean_rank"], m["map"],
                         time.perf_counter() - t0)
            table[f"{label} d={dim}"] = best or {"mean_rank": float("nan"), "map": float("nan")}
        table[f"spectral d={dim}"] = dict(spectral)

    verdicts, parts = [], []
    for dim in dims:
        p, e = table[f"Poincaré d={dim}"], table[f"Euclidean d={dim}"]
        ok = p["mean_rank"] < e["mean_rank"] and p["map"] > e["map"]
        verdicts.append(ok)
        parts.append(f"d={dim}: Poincaré rank {p['mean_rank']:.2f} / MAP {p['map']:.3f} vs Euclidean "
                     f"{e['mean_rank']:.2f} / {e['map']:.3f}")
    summary = (f"reconstruction of the {source} ({n} nodes) after {epochs} epochs, best lr of {list(lrs)} per row; "
               "passes when Poincaré has the lower mean rank and the higher MAP at every dimension. "
               + "; ".join(parts) + "." + (" quick=True: a smoke run, not a measurement." if quick else ""))
    return zoo.ClaimResult(plugin="poincare-embed", claim=CLAIM, passed=all(verdicts), table=table, summary=summary,
                           seconds=time.perf_counter() - t0,
                           settings={"task": "graph_embed", "protocol": "reconstruction", "hierarchy": source,
                                     "num_nodes": n, "dims": list(dims), "lrs": list(lrs), "epochs": epochs,
                                     "negatives": 10, "burn_in": 10, "burn_in_c": 10, "batch_size": 64, "seed": 0,
                                     "quick": quick, "sweep": sweep})
