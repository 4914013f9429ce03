"""PyLate side by side: ``colbert-token-pool`` (Ward token pooling) and the retrieval task's exact MaxSim
vs ``pylate``'s hierarchical token pooling (``ColBERT.pool_embeddings_hierarchical``) and MaxSim scoring
(``pylate.scores.colbert_scores``).

Both sides get the same token vectors: the retrieval task's wiki corpus (``load_wiki``: the first 1000
Wikipedia leads, every token of all-MiniLM-L6-v2, L2-normalised, with each article's short description
as its query), read from the task's cache by the zoo side and written once as arrays (no model runs on
either side; nothing can be downloaded). For each pool factor 1, 2, 3 (first token protected, as both
packages default) each side pools every document with its own function, then scores every query
against every document exhaustively with its own MaxSim and keeps the top 10. The orchestrator computes
nDCG@10 and recall@10 of both from the returned ids with one function. Timed: pooling per document
(median) and for the corpus; exhaustive scoring (query-document pairs per second; the padded layout of
the index is built before the clock starts, on both sides in the same length-sorted chunks; pylate's
queries go in length-sorted batches, the least padding its padded-tensor API allows).

pylate is installed without its dependencies (``--no-deps``) plus the pinned rest of what pip resolves
for it, less ``fast-plaid``/``fastkmeans``/``ninja``: fast-plaid pins torch 2.11.0 and is only needed for
the PLAID index, which neither pooling nor scoring uses.

    .venv/bin/python benchmarks/peers/pylate.py            # 1000 docs, all 967 queries, 3 rounds
    .venv/bin/python benchmarks/peers/pylate.py --quick    # smoke run
"""
from __future__ import annotations

import json
import logging
import math
import statistics
import tempfile
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.pylate")
PEER = "pylate"
# ``pip install pylate==1.6.0`` resolved on this machine, less fast-plaid, fastkmeans, ninja (see the docstring)
PEER_REQ = ["--no-deps", "pylate==1.6.0", "sentence-transformers==5.3.0", "transformers==5.3.0", "datasets==5.2.0",
            "accelerate==1.15.0", "tokenizers==0.22.2", "safetensors==0.8.0", "huggingface_hub==1.33.0",
            "hf-xet==1.8.0", "httpx==0.28.1", "httpcore==1.0.9", "h11==0.16.0", "anyio==4.16.0", "idna==3.20",
            "certifi==2026.10.19.post1", "numpy==2.4.6", "scipy==1.17.1", "scikit-learn==1.9.1", "joblib==1.6.0",
            "threadpoolctl==3.8.0", "pandas==3.1.1", "python-dateutil==4.0.0", "tzdata==2026.6", "pyarrow==26.0.1",
            "dill==0.4.1", "multiprocess==0.70.19", "xxhash==4.1.0", "psutil==7.2.2", "packaging==26.4",
            "PyYAML==6.0.4", "regex==2026.11.19", "tqdm==4.70.1", "ujson==5.12.0", "typer==0.29.2", "click==8.5.1",
            "rich==15.0.0", "markdown-it-py==4.3.0", "mdurl==0.1.2", "Pygments==2.21.0", "shellingham==1.5.4",
            "annotated-doc==0.0.7", "pydantic==2.14.4", "pydantic_core==2.50.5", "annotated-types==0.8.0",
            "typing-inspection==0.4.5", "narwhals==2.29.0", "cloudpickle==3.1.3"]
FACTORS = (1, 2, 3)
FIXES = ("Fixed after the first run: (1) `ward_pool` let scipy's `linkage` compute the distances with `pdist` "
         "(three quarters of its time); one BLAS Gram product now gives them: 1.3 -> 0.75 ms per document on this "
         "corpus (same process, interleaved), the same clusters on all 1000 documents; it took 1.4-1.7x pylate's time "
         "per document before (`--quick`). (2) The task's exact MaxSim (`maxsim_all`) padded every query to the "
         "longest (21 tokens, mean 8.7); it now multiplies the flat query tokens by each doc chunk and sums per "
         "query: 2.5-3.6x faster on 200 queries, scores equal within 1.5e-6.")
K = 10
CHUNK_TOKENS = 1 << 15  # padded doc tokens per scoring chunk (the task's PaddedSets default)
MAX_SCORES = 1 << 23    # query-token x doc-token products per scoring call (the task's maxsim_all default)


# ---------------------------------------------------------------------------------------------- sides
def _load(inp: dict):
    """Doc and query token sets as lists of float32 (n_i, d) tensors."""
    import numpy as np
    import torch

    torch.set_num_threads(1)
    a = np.load(inp["arrays"])
    split = lambda v, off: [torch.from_numpy(v[off[i]:off[i + 1]].astype(np.float32))  # noqa: E731
                            for i in range(len(off) - 1)]
    return split(a["doc_vectors"], a["doc_offsets"]), split(a["q_vectors"], a["q_offsets"])


def _chunks(lengths: list[int], budget: int = CHUNK_TOKENS) -> list[list[int]]:
    """Set ids in length order, cut into chunks of at most ``budget`` padded tokens (as the task's
    ``PaddedSets`` cuts the docs)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out, cur = [], []
    for i in order:
        if cur and (len(cur) + 1) * lengths[i] > budget:
            out.append(cur)
            cur = []
        cur.append(i)
    return out + ([cur] if cur else [])


def _time_pool(docs, pool_one) -> tuple[list, list[float]]:
    import time

    pooled, secs = [], []
    for i, d in enumerate(docs):
        t0 = time.perf_counter()
        pooled.append(pool_one(d, i))
        secs.append(time.perf_counter() - t0)
    return pooled, secs


def _result(pooled, secs, ids, score_s, n_queries: int, layout_s: float) -> dict:
    n_vec = sum(len(p) for p in pooled)
    dim = pooled[0].shape[1]
    return {"vectors": n_vec, "index_bytes": n_vec * dim * 4, "pool_ms_median": 1e3 * statistics.median(secs),
            "pool_s_total": sum(secs), "score_s": score_s, "layout_s": layout_s,
            "pairs_per_s": n_queries * len(pooled) / score_s, "ids": ids}


def side_ours(inp: dict, _args) -> dict:
    import time

    import torch

    from zoo_colbert_token_pool.model import TokenPool
    from zoo_task_retrieval.task import ExactMaxSim, PaddedSets, VectorSets

    docs, queries = _load(inp)
    qsets = VectorSets.from_list(queries)
    out = {}
    for f in inp["factors"]:
        pool = TokenPool(pool_factor=f, protected_tokens=1)
        pooled, secs = _time_pool(docs, pool.reduce_one)
        t0 = time.perf_counter()
        index = PaddedSets(VectorSets.from_list(pooled), chunk_tokens=CHUNK_TOKENS)  # the task's index layout
        layout_s = time.perf_counter() - t0
        exact = ExactMaxSim()  # factor 1: the task's exact-MaxSim baseline; else its search over pooled vectors
        with torch.no_grad():
            t0 = time.perf_counter()
            res = exact.search(index, qsets, K)
            score_s = time.perf_counter() - t0
        out[str(f)] = _result(pooled, secs, res.ids.tolist(), score_s, len(queries), layout_s)
    return out


def side_peer(inp: dict, _args) -> dict:
    import sys
    import time

    import torch

    here = Path(__file__).resolve().parent  # this script is pylate.py: keep it from shadowing the package
    sys.path[:] = [x for x in sys.path if Path(x or ".").resolve() != here]
    from pylate.models.colbert import ColBERT
    from pylate.scores import colbert_scores

    docs, queries = _load(inp)
    # the pooling of ColBERT.encode(..., pool_factor=f); it uses no model state, so it is called unbound
    pool_fn = ColBERT.pool_embeddings_hierarchical
    pad = torch.nn.utils.rnn.pad_sequence
    # queries in length order, padded per batch of at most MAX_SCORES // CHUNK_TOKENS padded tokens (the
    # least padding colbert_scores' (batch, tokens, dim) input allows), put back in order after scoring
    qbatches = []
    for ids in _chunks([len(q) for q in queries], MAX_SCORES // CHUNK_TOKENS):
        qbatches.append((torch.tensor(ids), pad([queries[i] for i in ids], batch_first=True),
                         pad([torch.ones(len(queries[i])) for i in ids], batch_first=True)))
    out = {}
    for f in inp["factors"]:
        pooled, secs = _time_pool(docs, lambda d, _i, f=f: pool_fn(None, [d], pool_factor=f, protected_tokens=1)[0])
        t0 = time.perf_counter()
        chunks = []
        for ids in _chunks([len(p) for p in pooled]):
            sets = [pooled[i] for i in ids]
            chunks.append((torch.tensor(ids), pad(sets, batch_first=True),
                           pad([torch.ones(len(s)) for s in sets], batch_first=True)))
        layout_s = time.perf_counter() - t0
        scores = torch.empty(len(queries), len(pooled))
        with torch.no_grad():
            t0 = time.perf_counter()
            for ids, dx, dm in chunks:
                for qids, qx, qm in qbatches:
                    scores[qids[:, None], ids] = colbert_scores(qx, dx, qm, dm)
            top = scores.topk(K, dim=1).indices
            score_s = time.perf_counter() - t0
        out[str(f)] = _result(pooled, secs, top.tolist(), score_s, len(queries), layout_s)
    return out


def side_data(inp: dict, _args) -> dict:
    """Write the retrieval task's wiki token vectors (its cache; encoded there once if missing)."""
    import numpy as np
    import torch

    from zoo_task_retrieval.data import load_wiki

    data = load_wiki(inp["n_docs"], "token", n_queries=inp["n_queries"], dtype=torch.float16)
    np.savez(inp["arrays"], doc_vectors=data.docs.vectors.numpy(), doc_offsets=data.docs.offsets.numpy(),
             q_vectors=data.queries.vectors.numpy(), q_offsets=data.queries.offsets.numpy())
    rel = [next(iter(q)) for q in data.qrels]
    return {"relevant": rel, "n_docs": data.n_docs, "n_queries": data.n_queries, "dim": data.docs.dim,
            "doc_vectors": int(len(data.docs.vectors)), "info": {k: str(v) for k, v in data.info.items()}}


# ---------------------------------------------------------------------------------------- orchestrate
def _metrics(ids: list[list[int]], relevant: list[int]) -> dict[str, float]:
    """nDCG@10 and recall@10 with one relevant document per query (the task's ``retrieval_metrics``)."""
    ndcg = rec = 0.0
    for row, r in zip(ids, relevant, strict=True):
        if r in row[:10]:
            ndcg += 1.0 / math.log2(row.index(r) + 2)
            rec += 1.0
    return {"ndcg@10": ndcg / len(ids), "recall@10": rec / len(ids)}


def _q(xs: list[float], spec: str = ".2f") -> str:
    return peerlib.quartiles(xs, spec)


def _ndcg_se(ids: list[list[int]], relevant: list[int]) -> float:
    gains = [1.0 / math.log2(row.index(r) + 2) if r in row[:10] else 0.0 for row, r in zip(ids, relevant, strict=True)]
    return statistics.stdev(gains) / math.sqrt(len(gains))


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env(PEER, PEER_REQ)
    n_docs, n_queries, rounds = (100, 50, 1) if a.quick else (a.docs, a.queries, a.rounds)
    with tempfile.TemporaryDirectory(prefix="zoo-peer-pylate-") as tmp:
        arrays = str(Path(tmp) / "tokens.npz")
        inp = Path(tmp) / "in.json"
        inp.write_text(json.dumps({"arrays": arrays, "n_docs": n_docs, "n_queries": n_queries, "factors": list(FACTORS)}))
        meta = peerlib.run_side(peerlib.OURS_PYTHON, __file__, "data", inp, timeout=3600)
        rel = meta["relevant"]

        def side(python: str, name: str):
            def run(r: int) -> dict:
                out = peerlib.run_side(python, __file__, name, inp, timeout=3600)
                log.info("round %d %s: %s", r, name, ", ".join(
                    f"f{f}: nDCG {_metrics(out[str(f)]['ids'], rel)['ndcg@10']:.4f}, pool {out[str(f)]['pool_ms_median']:.2f} "
                    f"ms/doc, {out[str(f)]['pairs_per_s']:.0f} pairs/s" for f in FACTORS))
                return out
            return run

        runs = peerlib.interleave({"ours": side(peerlib.OURS_PYTHON, "ours"), "peer": side(peer_py, "peer")}, rounds)
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["torch", "scipy", "zoo-core", "zoo-colbert-token-pool"])
    ver_peer = peerlib.versions(peer_py, ["torch", "scipy", PEER])
    md = _section(a, meta, runs, n_docs, rounds, ver_ours, ver_peer)
    peerlib.write_section("pylate", md)
    log.info(md)


def _section(a, meta, runs, n_docs, rounds, ver_ours, ver_peer) -> str:
    o, p = runs["ours"], runs["peer"]
    rel = meta["relevant"]
    rows = []
    for f in FACTORS:
        k = str(f)
        mo, mp = _metrics(o[0][k]["ids"], rel), _metrics(p[0][k]["ids"], rel)
        agree = statistics.mean(len(set(x) & set(y)) / K for x, y in zip(o[0][k]["ids"], p[0][k]["ids"], strict=True))
        what = "exact MaxSim (no pooling)" if f == 1 else f"pool factor {f}"
        rows.append((f"**{what}**: nDCG@10 (± s.e. over queries)", f"{mo['ndcg@10']:.4f} ± {_ndcg_se(o[0][k]['ids'], rel):.4f}",
                     f"{mp['ndcg@10']:.4f} ± {_ndcg_se(p[0][k]['ids'], rel):.4f}",
                     f"{mo['ndcg@10'] - mp['ndcg@10']:+.4f} (top-10 overlap {100 * agree:.0f}%)"))
        rows.append((f"f={f}: recall@10", f"{mo['recall@10']:.4f}", f"{mp['recall@10']:.4f}",
                     f"{mo['recall@10'] - mp['recall@10']:+.4f}"))
        vo, vp = o[0][k]["vectors"], p[0][k]["vectors"]
        rows.append((f"f={f}: index vectors; MB (float32)", f"{vo:,}; {o[0][k]['index_bytes'] / 1e6:.1f}",
                     f"{vp:,}; {p[0][k]['index_bytes'] / 1e6:.1f}", f"{vo / vp:.3f}"))
        if f > 1:
            po = [x[k]["pool_ms_median"] for x in o]
            pp = [x[k]["pool_ms_median"] for x in p]
            rows.append((f"f={f}: pooling ms per document (median; p25–p75 over rounds)", _q(po, ".3f"), _q(pp, ".3f"),
                         f"{peerlib.paired(po, pp):.2f} (paired)"))
            to = [x[k]["pool_s_total"] for x in o]
            tp = [x[k]["pool_s_total"] for x in p]
            rows.append((f"f={f}: pooling the corpus, s", _q(to), _q(tp), f"{peerlib.paired(to, tp):.2f} (paired)"))
        so = [x[k]["pairs_per_s"] / 1e3 for x in o]
        sp = [x[k]["pairs_per_s"] / 1e3 for x in p]
        rows.append((f"f={f}: exhaustive MaxSim, 1000 query-doc pairs/s", _q(so, ".1f"), _q(sp, ".1f"),
                     f"{peerlib.paired(so, sp):.2f} (paired)"))
    rss_o = [x["_process"]["peak_rss_mb"] for x in o]
    rss_p = [x["_process"]["peak_rss_mb"] for x in p]
    rows.append(("peak RSS of the process, MB (imports and data included)", _q(rss_o, ".0f"), _q(rss_p, ".0f"),
                 f"{peerlib.paired(rss_o, rss_p):.2f} (paired)"))
    md = [f"### Token pooling and MaxSim: `colbert-token-pool` + retrieval exact MaxSim vs {PEER} {ver_peer[PEER]}", "",
          f"`{a.command}`{' (**--quick**: smoke run, not a measurement)' if a.quick else ''}", "",
          f"Ours: torch {ver_ours['torch']}, scipy {ver_ours['scipy']}, zoo-core {ver_ours['zoo-core']}, "
          f"zoo-colbert-token-pool {ver_ours['zoo-colbert-token-pool']}. Peer: torch {ver_peer['torch']}, scipy "
          f"{ver_peer['scipy']}, {PEER} {ver_peer[PEER]} (installed `--no-deps` with its resolved dependencies "
          "pinned, less fast-plaid/fastkmeans/ninja: fast-plaid pins torch 2.11.0 and serves only the PLAID "
          f"index). {peerlib.machine()}.", "",
          f"Same token vectors on both sides: the retrieval task's wiki corpus, first {n_docs} Wikipedia leads "
          f"({meta['doc_vectors']:,} all-MiniLM-L6-v2 token vectors of {meta['dim']} dims, normalised) and "
          f"{meta['n_queries']} description queries with one relevant article each. Each side pools every "
          "document with its own function (ours `TokenPool.reduce_one`, pylate "
          "`ColBERT.pool_embeddings_hierarchical`; first token protected) and ranks every document for every "
          "query by exhaustive MaxSim (ours `ExactMaxSim.search` over the task's `PaddedSets`, pylate "
          "`scores.colbert_scores` over zero-padded, masked chunks: the same length-sorted doc chunks, queries "
          "in length-sorted batches padded per batch; ours does not pad queries); nDCG@10 from "
          f"the top-10 ids with one function. Times: medians over {rounds} interleaved round(s), one thread.", "",
          "| metric | ours | peer | ours − peer or ours/peer |", "|---|---|---|---|"]
    md += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for r in rows]
    md += ["", a.note if a.note else _verdict(o, p, rel), ""]
    return "\n".join(md)


def _verdict(o, p, rel) -> str:
    parts = []
    for f in FACTORS[1:]:
        k = str(f)
        d = _metrics(o[0][k]["ids"], rel)["ndcg@10"] - _metrics(p[0][k]["ids"], rel)["ndcg@10"]
        parts.append(f"f={f}: {d:+.4f}")
    po = peerlib.paired([x["2"]["pool_ms_median"] for x in o], [x["2"]["pool_ms_median"] for x in p])
    sc = peerlib.paired([x["1"]["pairs_per_s"] for x in o], [x["1"]["pairs_per_s"] for x in p])
    se = max(_ndcg_se(x[0][str(f)]["ids"], rel) for x in (o, p) for f in FACTORS)
    return (f"nDCG@10 ours − pylate: {', '.join(parts)} (standard error of each nDCG@10 over queries <= {se:.4f}). "
            "pylate 1.6.0 gives Ward the "
            "condensed cosine distances 1 − cos (half the squared Euclidean distance of unit vectors) and keeps the "
            "cluster means unnormalised, ours gives it Euclidean distances and renormalises the means (the paper's "
            f"pooling as the catalog describes it). Pooling takes {po:.2f}x pylate's time per document and exact "
            f"MaxSim scores {sc:.2f}x pylate's pairs per second (no pooling). {FIXES}")


def _args(p) -> None:
    p.add_argument("--docs", type=int, default=1000, help="first N wiki articles (the task caches 1000)")
    p.add_argument("--queries", type=int, default=None, help="first N queries (default: all)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved repetitions (timings)")
    p.add_argument("--quick", action="store_true", help="100 docs, 50 queries, one round: a smoke run")
    p.add_argument("--note", default="", help="the verdict sentence (default: a generated one)")


if __name__ == "__main__":
    peerlib.side_main({"ours": side_ours, "peer": side_peer, "data": side_data}, orchestrate, _args)
