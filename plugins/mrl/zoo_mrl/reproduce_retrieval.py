"""Adaptive retrieval with Matryoshka embeddings (paper Sec. 5.3): shortlist at m dims, rerank at D.

``zoo_mrl.reproduce_retrieval:reproduce`` (the registry keeps one claim per plugin, so this one is a
function of its own; ``zoo reproduce mrl`` runs the classification claim). Two corpora:

* digits (the catalog's setting): ``mrl_digits_cnn`` trained as the ``digits`` recipe does (600
  steps, seed 0) embeds the 1347 training images (database) and the 450 test images (queries);
  relevance is the class label, the metric mAP@10. Reported: exact kNN mAP@10 at every truncation
  m, next to one fixed-feature (FF) model trained for each m alone.
* wiki: a Matryoshka projection (384 x 384 linear map, initialised to the identity) of the task's
  all-MiniLM-L6-v2 sentence vectors, trained with the MRL loss on the contrastive objective,
  sum over m in {8, 16, ..., 384} of the in-batch cross-entropy of cos(q[:m], d[:m]) / 0.05, on
  Wikipedia leads 2000-3999; database: leads 0-1999, queries: their descriptions; metric nDCG@10.
  Next to it: the raw MiniLM vectors and their PCA rotation (fitted on the training leads),
  truncated at the same sizes.

Adaptive retrieval everywhere: cosine shortlist of K items with the first m_s coordinates, rerank
with all D; against exact search with all D: the metric, the overlap of the top 10 with exact
search, multiply-adds per query (``search_flops``), and measured speed-ups (``speedups``: single
queries and the whole query set, the two searches interleaved in this process, one thread); then
the speed-up on random vectors of larger databases (timing only). The verdict: on both corpora
some (m_s, K) of the grid is within ``TOLERANCE`` of exact full-D search at no more than a
quarter of its multiply-adds (the measured times are reported, not part of the verdict).
"""
from __future__ import annotations

import logging
import statistics
import time
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

import zoo

from .retrieval import PrefixIndex, map_at_k, search_flops

log = logging.getLogger(__name__)

CLAIM = ("Adaptive retrieval with Matryoshka embeddings (shortlist at a few dimensions, rerank at full size) matches "
         "exact full-size search within 0.01 (mAP@10 on digits, nDCG@10 on wiki) with at least 4x fewer "
         "multiply-adds per query")
TOLERANCE, MIN_SPEEDUP = 0.01, 4.0
DIGITS_NESTING = (2, 4, 8, 16, 32, 64)
WIKI_NESTING = (8, 16, 32, 64, 128, 256, 384)
FULL = {"digits_steps": 600, "wiki_steps": 600, "ff": True, "repeats": 3, "digits_grid": ((2, 50), (4, 50), (8, 50), (16, 50)),
        "wiki_grid": ((16, 100), (32, 100), (64, 100), (32, 200)), "n_docs": 4000, "n_test_docs": 2000,
        "timing_sizes": (20_000, 100_000)}
QUICK = {"digits_steps": 12, "wiki_steps": 3, "ff": False, "repeats": 1, "digits_grid": ((8, 50),),
         "wiki_grid": ((32, 100),), "n_docs": None, "n_test_docs": 200,  # n_docs None: synthetic stand-in for wiki
         "timing_sizes": (2000,)}


class MatryoshkaProjection(nn.Module):
    """A linear map of frozen sentence vectors trained so every prefix is a retrieval embedding.

    ``loss`` is the MRL loss on the in-batch contrastive objective: sum over ``nesting`` of the
    cross-entropy of cos(q[:m], d[:m]) / ``temperature`` (all c_m = 1).
    """

    def __init__(self, dim: int = 384, nesting: tuple[int, ...] = WIKI_NESTING, temperature: float = 0.05) -> None:
        super().__init__()
        self.nesting, self.temperature = nesting, temperature
        self.proj = nn.Linear(dim, dim, bias=False)
        nn.init.eye_(self.proj.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x.float())

    encode_queries = encode_docs = forward

    def loss(self, q: torch.Tensor, d: torch.Tensor, target: torch.Tensor, ignore: torch.Tensor) -> torch.Tensor:
        total = q.new_zeros(())
        for m in self.nesting:
            s = F.normalize(q[:, :m], dim=-1) @ F.normalize(d[:, :m], dim=-1).T / self.temperature
            total = total + F.cross_entropy(s.masked_fill(ignore, float("-inf")), target)
        return total


def _seconds(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def speedups(index: PrefixIndex, queries: torch.Tensor, m: int, k_shortlist: int, repeats: int,
             n_latency: int = 64) -> dict[str, float]:
    """Measured exact / adaptive time ratios, the two searches interleaved so machine load hits both alike.

    ``latency speed-up``: medians over ``n_latency`` queries searched one at a time; ``batch
    speed-up``: medians over ``repeats`` searches of the whole query set at once.
    """
    lat_e, lat_a = [], []
    for i in range(min(n_latency, len(queries))):
        q = queries[i:i + 1]
        lat_e.append(_seconds(lambda q=q: index.search(q, 10)))
        lat_a.append(_seconds(lambda q=q: index.adaptive(q, m, k_shortlist, 10)))
    bat_e, bat_a = [], []
    for _ in range(repeats):
        bat_e.append(_seconds(lambda: index.search(queries, 10)))
        bat_a.append(_seconds(lambda: index.adaptive(queries, m, k_shortlist, 10)))
    med = statistics.median
    return {"latency ms exact": 1e3 * med(lat_e), "latency ms adaptive": 1e3 * med(lat_a),
            "latency speed-up": med(lat_e) / med(lat_a), "batch speed-up": med(bat_e) / med(bat_a)}


def adaptive_rows(db: torch.Tensor, queries: torch.Tensor, grid: tuple[tuple[int, int], ...], quality: Callable,
                  repeats: int, label: str) -> dict[str, dict[str, float]]:
    """Exact full-D search and each (m_s, K) of ``grid``: quality, top-10 overlap, FLOPs, measured speed-ups."""
    index = PrefixIndex(db, dims=[m for m, _ in grid])
    n, dim = db.shape
    exact = index.search(queries, 10)
    base_q = quality(exact)
    rows = {f"{label}: exact search, D={dim}": {"quality": base_q, "top10 overlap": 1.0, "flops/query": float(n * dim),
                                                "flops speed-up": 1.0}}
    for m, k in grid:
        ids = index.adaptive(queries, m, k, 10)
        overlap = sum(len(set(a) & set(b)) for a, b in zip(ids.tolist(), exact.tolist(), strict=True)) / exact.numel()
        flops = search_flops(n, m, k, dim)
        rows[f"{label}: shortlist K={k} at m={m}, rerank at D={dim}"] = {
            "quality": quality(ids), "quality - exact": quality(ids) - base_q, "top10 overlap": overlap,
            "flops/query": float(flops), "flops speed-up": n * dim / flops, **speedups(index, queries, m, k, repeats)}
    return rows


def timing_rows(sizes: tuple[int, ...], dim: int = 384, m: int = 32, k_shortlist: int = 200,
                repeats: int = 3) -> dict[str, dict[str, float]]:
    """Speed only, on random vectors: how the measured speed-up grows with the database size N."""
    g = torch.Generator().manual_seed(0)
    rows = {}
    for n in sizes:
        index = PrefixIndex(torch.randn(n, dim, generator=g), dims=(m,))
        queries = torch.randn(64, dim, generator=g)
        rows[f"timing only, random N={n}: K={k_shortlist} at m={m}, rerank at D={dim}"] = {
            "flops speed-up": n * dim / search_flops(n, m, k_shortlist, dim), **speedups(index, queries, m, k_shortlist, repeats)}
    return rows


def digits_part(cfg: dict) -> dict[str, dict[str, float]]:
    """mAP@10 at every truncation (MRL vs FF) and adaptive retrieval on digits."""
    from zoo_task_digits import task as digits

    from .model import fixed_feature_digits_cnn
    from .train import fit_digits

    x_tr, y_tr, x_te, y_te = digits.load_split()
    model, _ = fit_digits(lambda: zoo.create("mrl_digits_cnn"), seed=0, steps=cfg["digits_steps"])
    with torch.no_grad():
        db, q = model.embed(x_tr), model.embed(x_te)
    rows: dict[str, dict[str, float]] = {}
    rows["digits MRL: exact kNN mAP@10 at m"] = {
        f"m={m}": map_at_k(PrefixIndex(db, (m,)).search(q, 10, m), y_te, y_tr) for m in DIGITS_NESTING}
    if cfg["ff"]:
        ff = {}
        for m in DIGITS_NESTING:
            ff_model, _ = fit_digits(lambda m=m: fixed_feature_digits_cnn(dim=m), seed=0, steps=cfg["digits_steps"])
            with torch.no_grad():
                fdb, fq = ff_model.embed(x_tr), ff_model.embed(x_te)
            ff[f"m={m}"] = map_at_k(PrefixIndex(fdb).search(fq, 10), y_te, y_tr)
        rows["digits FF (one model per m): exact kNN mAP@10"] = ff
    rows.update(adaptive_rows(db, q, cfg["digits_grid"], lambda ids: map_at_k(ids, y_te, y_tr), cfg["repeats"],
                              "digits MRL (mAP@10)"))
    return rows


def _wiki(n_docs: int | None, n_test_docs: int) -> tuple:
    """Test leads [0, n_test_docs) with their queries, training leads after them (sentence vectors).

    ``n_docs=None``: the task's synthetic single-vector corpus (d=384) instead, for quick runs.
    """
    from zoo_task_retrieval.data import RetrievalData, load_synthetic, load_wiki

    if n_docs is None:
        test = load_synthetic("single", n_docs=n_test_docs, n_queries=40, dim=384, seed=0)
        train = load_synthetic("single", n_docs=n_test_docs, n_queries=160, dim=384, seed=1)
        return test.queries, test.docs, torch.tensor([next(iter(r)) for r in test.qrels]), train
    full = load_wiki(n_docs, "sentence")
    target = [next(iter(r)) for r in full.qrels]
    te = [i for i, d in enumerate(target) if d < n_test_docs]
    tr = [i for i, d in enumerate(target) if d >= n_test_docs]
    train = RetrievalData(full.queries[tr], full.docs[n_test_docs:], [{target[i] - n_test_docs: 1.0} for i in tr], "single")
    return full.queries[te], full.docs[:n_test_docs], torch.tensor([target[i] for i in te]), train


def wiki_part(cfg: dict) -> dict[str, dict[str, float]]:
    """nDCG@10 at every truncation (MRL projection vs raw MiniLM vs PCA) and adaptive retrieval on wiki."""
    from zoo_task_retrieval import task

    queries, docs, target, train = _wiki(cfg["n_docs"], cfg["n_test_docs"])
    qrels = [{int(t): 1.0} for t in target]

    def ndcg(ids: torch.Tensor) -> float:
        return task.retrieval_metrics(ids, qrels, ks=(10,))["ndcg@10"]

    torch.manual_seed(0)
    head = MatryoshkaProjection()
    task.train(head, train, steps=cfg["wiki_steps"], batch_size=128, lr=1e-3, seed=0)
    x = torch.cat([train.docs, train.queries]).float()
    mu = x.mean(0)
    pca = torch.linalg.svd(x - mu, full_matrices=False).Vh.T
    spaces = {"MRL projection": (head(docs).detach(), head(queries).detach()),
              "raw MiniLM": (docs.float(), queries.float()),
              "PCA of MiniLM": ((docs.float() - mu) @ pca, (queries.float() - mu) @ pca)}
    rows = {f"wiki {name}: exact nDCG@10 at m": {f"m={m}": ndcg(PrefixIndex(d, (m,)).search(q, 10, m)) for m in WIKI_NESTING}
            for name, (d, q) in spaces.items()}
    d, q = spaces["MRL projection"]
    rows.update(adaptive_rows(d, q, cfg["wiki_grid"], ndcg, cfg["repeats"], "wiki MRL projection (nDCG@10)"))
    return rows


def reproduce(quick: bool = False) -> "zoo.ClaimResult":
    """Measure adaptive retrieval on digits and wiki; return the table and the verdict.

    Args:
        quick: a few training steps, one configuration per corpus, and the task's synthetic corpus in place
            of wiki (seconds; for tests). The numbers then mean nothing.
    """
    from zoo_task_retrieval import task

    t0, cpu0 = time.perf_counter(), time.process_time()
    cfg = QUICK if quick else FULL
    with task.cpu_threads(1):
        table = {**digits_part(cfg), **wiki_part(cfg), **timing_rows(cfg["timing_sizes"], repeats=cfg["repeats"])}

    def best(prefix: str) -> dict[str, float] | None:
        ok = [r for name, r in table.items() if name.startswith(prefix) and "shortlist" in name
              and r["quality - exact"] >= -TOLERANCE and r["flops speed-up"] >= MIN_SPEEDUP]
        return max(ok, key=lambda r: r["flops speed-up"]) if ok else None

    found = {"digits": best("digits MRL (mAP@10)"), "wiki": best("wiki MRL projection")}
    passed = all(found.values())
    summary = "; ".join(
        f"{corpus}: " + (f"within {TOLERANCE} of exact at {r['flops speed-up']:.1f}x fewer multiply-adds "
                         f"(measured: {r['latency speed-up']:.2f}x single-query latency, {r['batch speed-up']:.2f}x "
                         "batch time)" if r else f"no grid point within {TOLERANCE} at "
                                                                             f">= {MIN_SPEEDUP:g}x fewer multiply-adds")
        for corpus, r in found.items()) + "; random-vector timing: " + ", ".join(
        f"N={name.split('N=')[1].split(':')[0]} {r['latency speed-up']:.1f}x" for name, r in table.items()
        if name.startswith("timing only")) + (". quick=True: a smoke run, not a measurement." if quick else ".")
    return zoo.ClaimResult(plugin="mrl", claim=CLAIM, passed=passed, table=table, summary=summary,
                           seconds=time.perf_counter() - t0,
                           settings={"cpu_seconds": time.process_time() - cpu0, "quick": quick, "threads": 1,
                                     **{k: [list(p) for p in v] if k.endswith("grid") else v for k, v in cfg.items()},
                                     "tolerance": TOLERANCE, "min_speedup": MIN_SPEEDUP})
