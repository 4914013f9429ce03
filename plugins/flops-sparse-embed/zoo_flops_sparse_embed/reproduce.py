"""``zoo reproduce flops-sparse-embed``: accuracy vs multiplications per query, FLOPs vs L1 vs dense PCA.

On the task's wiki split (``wiki_split``: test leads 0-1999, training leads 2000-3999; quick runs: the
synthetic 384-d corpus), ``flops_sparse_embed`` trained by the task's ``train`` with the FLOPs
regulariser, the L1 regulariser or none, searched through its inverted index (multiplications per
query counted exactly), against PCA of the MiniLM vectors and the raw vectors searched exactly (N * d
multiplications; they do not depend on the seed). Each FLOPs point reports its ``dominance_gap`` and
its ``ndcg_over_l1``, the nDCG@10 above the seed's L1 curve at the same cost; the last row averages
the latter over the FLOPs weights: the head-to-head comparison with L1 the paper makes.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence

import torch
from torch.nn import functional as F

from zoo.claims import Check, Claim, Row
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData, synthetic_split, wiki_split

from .plugin import CLAIM
from .train import BATCH, LR, STEPS, fit, sparse_metrics

MARGIN = 0.01
FLOPS_LAMS, L1_LAMS, PCA_DIMS = (0.3, 1.0, 3.0, 10.0), (0.003, 0.01, 0.03, 0.1), (8, 16, 32, 64, 128)
N_DOCS, N_TEST_DOCS = 4000, 2000
RAW = "dense raw MiniLM d=384 (task exact-dense)"
VERSUS_L1 = "FLOPs points vs the L1 curve at equal cost"


def pca_data(data: RetrievalData, d: int) -> RetrievalData:
    """Test queries and docs projected on the top ``d`` principal axes of the training vectors, renormalised."""
    x = torch.cat([data.train.docs, data.train.queries]).float()
    mu = x.mean(0)
    axes = torch.linalg.svd(x - mu, full_matrices=False).Vh[:d].T

    def project(v: torch.Tensor) -> torch.Tensor:
        return F.normalize((v.float() - mu) @ axes, dim=-1)

    return RetrievalData(project(data.queries), project(data.docs), data.qrels, "single", name=f"wiki-pca{d}")


def dense_metrics(data: RetrievalData) -> dict[str, float]:
    """Exact dense search (the task's exact-dense baseline) and its N * d multiplications per query."""
    m, _ = task.measure(task.build_baseline("exact-dense"), data, k=100, latency_queries=16)
    out = {k: float(m[k]) for k in ("ndcg@10", "mrr", "recall@100", "latency_ms", "index_bytes")}
    out["flops"] = float(data.n_docs * data.docs.shape[1])
    return out


def dominance_gap(point: Mapping[str, float], others: Iterable[Mapping[str, float]]) -> float:
    """nDCG@10 by which the best of ``others`` costing no more FLOPs beats ``point`` (negative: none beats it).

    Retrieving nothing costs 0 FLOPs at nDCG@10 0, so the gap is at least ``-point["ndcg@10"]``.

    >>> round(dominance_gap({"flops": 10, "ndcg@10": 0.5}, [{"flops": 8, "ndcg@10": 0.52}, {"flops": 11, "ndcg@10": 0.9}]), 6)
    0.02
    """
    return max([o["ndcg@10"] for o in others if o["flops"] <= point["flops"]] + [0.0]) - point["ndcg@10"]


def curve_advantage(point: Mapping[str, float], curve: Sequence[Mapping[str, float]]) -> float:
    """nDCG@10 of ``point`` minus the ``curve``'s at the same FLOPs (interpolated linearly in log FLOPs).

    Outside the curve's FLOPs range the nearest end point stands in (a cheaper end is a stricter
    comparison for ``point``, a dearer end a kinder one); points of equal FLOPs are averaged.

    >>> curve = [{"flops": 100, "ndcg@10": 0.4}, {"flops": 10_000, "ndcg@10": 0.6}]
    >>> round(curve_advantage({"flops": 1_000, "ndcg@10": 0.55}, curve), 6)
    0.05
    """
    by_cost: dict[float, list[float]] = {}
    for c in curve:
        by_cost.setdefault(math.log(max(c["flops"], 1.0)), []).append(c["ndcg@10"])
    xs = sorted(by_cost)
    ys = [sum(by_cost[x]) / len(by_cost[x]) for x in xs]
    x = math.log(max(point["flops"], 1.0))
    if x <= xs[0] or len(xs) == 1:
        return point["ndcg@10"] - (ys[0] if x <= xs[0] else ys[-1])
    if x >= xs[-1]:
        return point["ndcg@10"] - ys[-1]
    i = next(j for j in range(1, len(xs)) if xs[j] >= x)
    t = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return point["ndcg@10"] - (ys[i - 1] + t * (ys[i] - ys[i - 1]))


@functools.lru_cache(maxsize=2)
def _data(quick: bool) -> RetrievalData:
    return synthetic_split(200) if quick else wiki_split(N_DOCS, N_TEST_DOCS)


@functools.cache  # each point once per seed: its own row and every FLOPs row's gap read it
def sparse_row(*, seed: int, quick: bool, steps: int, regularizer: str, lam: float) -> dict[str, float]:
    """``flops_sparse_embed`` trained with ``regularizer`` at weight ``lam``, searched by its inverted index."""
    model, stats = fit(_data(quick), seed=seed, steps=steps, regularizer=regularizer, lam=lam)
    return {**sparse_metrics(model, _data(quick)), "final_train_loss": stats["final_train_loss"]}


@functools.cache
def dense_row(*, seed: int, quick: bool, dim: int | None) -> dict[str, float]:
    """Exact dense search over the PCA projection to ``dim`` (None: the raw vectors)."""
    return dense_metrics(_data(quick) if dim is None else pca_data(_data(quick), dim))


def flops_row(*, seed: int, quick: bool, steps: int, lam: float) -> dict[str, float]:
    """A FLOPs-regularised point and its ``dominance_gap`` to every baseline point of the same seed."""
    baselines = [sparse_row(seed=seed, quick=quick, steps=steps, regularizer=r, lam=x)
                 for r, x in [*(("l1", x) for x in L1_LAMS), ("none", 0.0)]]
    baselines += [dense_row(seed=seed, quick=quick, dim=d) for d in (*PCA_DIMS, None)]
    row = sparse_row(seed=seed, quick=quick, steps=steps, regularizer="flops", lam=lam)
    return {**row, "dominance_gap": dominance_gap(row, baselines), "ndcg_over_l1": curve_advantage(row, baselines[:len(L1_LAMS)])}


def versus_l1_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """The FLOPs points' mean nDCG@10 above the L1 curve at equal cost (``curve_advantage``), one seed."""
    gaps = [flops_row(seed=seed, quick=quick, steps=steps, lam=x)["ndcg_over_l1"] for x in FLOPS_LAMS]
    return {"ndcg_over_l1_mean": sum(gaps) / len(gaps), "ndcg_over_l1_min": min(gaps)}


def _label(reg: str, lam: float) -> str:
    return f"sparse 1024-d, {reg} reg, lambda={lam:g}"


REPRODUCTION = Claim(
    plugin="flops-sparse-embed", claim=CLAIM, task="retrieval", steps=STEPS, quick_steps=5, seeds=(0, 1, 2, 3, 4),
    rows=[*[Row(_label("l1", x), sparse_row, {"regularizer": "l1", "lam": x}) for x in L1_LAMS],
          Row("sparse 1024-d, no reg (ReLU only)", sparse_row, {"regularizer": "none", "lam": 0.0}),
          *[Row(f"dense PCA d={d}", dense_row, {"dim": d}) for d in PCA_DIMS], Row(RAW, dense_row, {"dim": None}),
          *[Row(_label("flops", x), flops_row, {"lam": x}) for x in FLOPS_LAMS],  # after the rest: their gaps read them
          Row(VERSUS_L1, versus_l1_row)],
    checks=[*[Check(_label("flops", x), "dominance_gap", higher=False, margin=MARGIN) for x in FLOPS_LAMS],
            Check(VERSUS_L1, "ndcg_over_l1_mean", margin=0.0)],
    settings={**task.describe(corpus="wiki", kind="single", steps=STEPS, batch_size=BATCH, lr=LR, n_docs=N_TEST_DOCS),
              "training_leads": [N_TEST_DOCS, N_DOCS], "dim": 1024},
    notes=f"margin {MARGIN} nDCG@10, fixed before the run: a FLOPs point is beaten when a baseline point (L1, "
          "ReLU-only, PCA, raw) costs no more multiplications per query and has nDCG@10 higher by more than the "
          "margin; the claim holds when no FLOPs point is beaten (one check per FLOPs weight) and the FLOPs points "
          "lie above the L1 curve at equal cost on average over the four weights (margin 0: the paper claims a better "
          "trade-off than L1, not by how much; without this check a tie with L1 passed)",
)
