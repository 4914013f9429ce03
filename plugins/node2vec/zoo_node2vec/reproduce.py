"""``zoo reproduce node2vec``: link prediction, node2vec vs DeepWalk vs the task's baselines.

For each graph and seed, ``graph_embed.link_split`` holds out 50% of the edges (the residual graph
stays connected). node2vec's (p, q) is chosen from {0.25, 1, 4}^2 as in §4.3 of the paper, but on
validation edges rather than labels: a second split holds out 25% of the residual edges, every
(p, q) is fit on what is left and scored by the same Hadamard + logistic-regression AUC (ties go to
p = q = 1). The chosen (p, q) and DeepWalk (p = q = 1) are then fit on the residual graph and
scored on the test edges by ``graph_embed.evaluate``, which also scores the task's baselines on the
same split. Embedding dimension 128, r = 10 walks of length 80, window 10 (the paper's settings).
"""
from __future__ import annotations

import itertools
import logging
import time

import numpy as np

from .plugin import CLAIM

log = logging.getLogger(__name__)

GRAPHS, SEEDS = ("les_miserables",), (0, 1, 2)
GRID = (0.25, 1.0, 4.0)
TEST_FRAC, VAL_FRAC = 0.5, 0.25
QUICK = {"graphs": ("karate",), "seeds": (0,), "grid": (1.0, 4.0), "overrides": {"num_walks": 2, "walk_length": 10,
                                                                                    "dim": 16}}


def _select_pq(graph: str, seed: int, grid: tuple[float, ...], overrides: dict) -> tuple[tuple[float, float], dict]:
    """(p, q) with the best validation AUC (ties: the first in order, p = q = 1 first)."""
    import torch

    from zoo_task_graph_embed import task

    from .model import node2vec

    edges, n, names = task.load_graph(graph)
    split = task.link_split(edges, TEST_FRAC, seed, num_nodes=n)
    val = task.link_split(split.train_pos, VAL_FRAC, seed + 1000, num_nodes=n)
    order = [(1.0, 1.0)] + [pq for pq in itertools.product(grid, grid) if pq != (1.0, 1.0)]
    scores = {}
    for p, q in order:
        torch.manual_seed(seed)
        model = node2vec(num_nodes=n, p=p, q=q, **overrides)
        model.fit(task.GraphData(val.train_pos, n, tuple(names)), seed=seed)
        scores[f"p={p:g},q={q:g}"] = task.link_auc(model.embeddings(), val.test_pos, val.test_neg,
                                                   train_pos=val.train_pos, train_neg=val.train_neg)
    best = max(order, key=lambda pq: scores[f"p={pq[0]:g},q={pq[1]:g}"])
    return best, scores


def reproduce(quick: bool = False) -> "zoo.ClaimResult":  # noqa: F821 - zoo imported lazily
    """Run the comparison; rows ``<graph>/<method>`` with mean and std of test AUC over seeds."""
    import torch

    import zoo
    from zoo_task_graph_embed import task
    from zoo.task import mean_std

    graphs, seeds = (QUICK["graphs"], QUICK["seeds"]) if quick else (GRAPHS, SEEDS)
    grid, overrides = (QUICK["grid"], QUICK["overrides"]) if quick else (GRID, {})
    t0 = time.perf_counter()
    auc: dict[str, dict[str, list[float]]] = {}
    chosen: dict[str, list[str]] = {}
    val_scores: dict[str, dict[str, dict[str, float]]] = {}
    for graph in graphs:
        rows: dict[str, list[float]] = {}
        for seed in seeds:
            (p, q), scores = _select_pq(graph, seed, grid, overrides)
            chosen.setdefault(graph, []).append(f"p={p:g},q={q:g}")
            val_scores.setdefault(graph, {})[str(seed)] = scores
            for label, (pp, qq) in (("node2vec", (p, q)), ("DeepWalk", (1.0, 1.0))):
                torch.manual_seed(seed)
                model = zoo.create("node2vec", num_nodes=task.load_graph(graph)[1], p=pp, q=qq, **overrides)
                res = zoo.evaluate(model, graph=graph, seed=seed)
                rows.setdefault(label, []).append(res.metrics["auc"])
            for name, m in res.baselines.items():
                rows.setdefault(name, []).append(m["auc"])
            log.info("%s seed %d: p=%g q=%g, %.1f s", graph, seed, p, q, time.perf_counter() - t0)
        auc[graph] = rows

    table = {}
    for graph, rows in auc.items():
        for name, vals in rows.items():
            m, s = mean_std(vals)
            table[f"{graph}/{name}"] = {"auc": m, "auc_std": s, **{f"seed{k}": v for k, v in zip(seeds, vals, strict=True)}}
    verdicts, parts = [], []
    for graph, rows in auc.items():
        ours = float(np.mean(rows["node2vec"]))
        rivals = {k: float(np.mean(v)) for k, v in rows.items() if k != "node2vec"}
        best = max(rivals, key=rivals.get)
        verdicts.append(ours > rivals[best])
        parts.append(f"{graph}: node2vec {ours:.3f} (p,q chosen: {', '.join(chosen[graph])}) vs DeepWalk "
                     f"{rivals['DeepWalk']:.3f}, best other {best} {rivals[best]:.3f}")
    passed = all(verdicts)
    summary = ("mean test ROC-AUC over seeds " + str(list(seeds)) + "; the claim passes when node2vec's mean "
               "is above every other row's on every graph. " + "; ".join(parts) + "."
               + (" quick=True: a smoke run, not a measurement." if quick else ""))
    return zoo.ClaimResult(plugin="node2vec", claim=CLAIM, passed=passed, table=table, summary=summary,
                           seconds=time.perf_counter() - t0,
                           settings={"task": "graph_embed", "protocol": "link", "graphs": list(graphs),
                                     "seeds": list(seeds), "grid": list(grid), "test_frac": TEST_FRAC,
                                     "val_frac": VAL_FRAC, "overrides": overrides, "chosen": chosen,
                                     "validation_auc": val_scores, "quick": quick})
