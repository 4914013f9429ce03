"""Conformance kit plus behaviour tests of CRISP's in-training k-means and the post-hoc comparison."""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_crisp.model import cluster_counts, crisp, kmeans_pool, posthoc
from zoo_crisp.reproduce import REPRODUCTION
from zoo_task_retrieval.data import VectorSets


def test_conformance(hub):
    small = {"d_model": 16, "out_dim": 8}
    check_plugin("crisp", overrides={"crisp_colbert": small, "colbert_posthoc_kmeans": small})


def test_cluster_counts_fixed_and_fractional():
    n = torch.tensor([1, 4, 9, 32])
    assert cluster_counts(n, 8).tolist() == [1, 4, 8, 8]
    assert cluster_counts(n, 0.25).tolist() == [1, 1, 3, 8]


def test_kmeans_recovers_planted_groups_and_masks_padding():
    g = torch.Generator().manual_seed(0)
    centers = torch.eye(6)[:3]
    toks = torch.cat([F.normalize(c + 0.05 * torch.randn(3, 6, generator=g), dim=-1) for c in centers])  # 9 tokens
    x = torch.zeros(2, 10, 6)
    x[0, :9] = toks
    x[1, :2] = toks[:2]
    mask = torch.zeros(2, 10, dtype=torch.bool)
    mask[0, :9] = True
    mask[1, :2] = True
    cent, cmask = kmeans_pool(x, mask, 3)
    assert cmask.tolist() == [[True, True, True], [True, True, False]]
    assert torch.allclose((cent[0] @ centers.T).max(0).values, torch.ones(3), atol=0.01)  # one centroid per group
    assert torch.allclose(cent[1, :2], toks[:2], atol=1e-6) and torch.equal(cent[1, 2], torch.zeros(6))


def test_centroids_carry_gradients():
    x = F.normalize(torch.randn(1, 8, 4), dim=-1).requires_grad_(True)
    cent, _ = kmeans_pool(x, torch.ones(1, 8, dtype=torch.bool), 2)
    cent.sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0


def test_crisp_clusters_in_training_and_posthoc_only_at_inference():
    torch.manual_seed(0)
    docs = VectorSets.from_list([F.normalize(torch.randn(n, 64), dim=-1) for n in (12, 5, 20)])
    for build, in_training in ((crisp, True), (posthoc, False)):
        torch.manual_seed(0)
        m = build(doc_clusters=4)
        m.train()
        assert docs.lengths.tolist() != m.encode_docs(docs).lengths.tolist() or not in_training
        assert m.encode_docs(docs).lengths.tolist() == ([4, 4, 4] if in_training else [12, 5, 20])
        m.eval()
        assert m.encode_docs(docs).lengths.tolist() == [4, 4, 4]
        assert m.encode_queries(docs).lengths.tolist() == [12, 5, 20]  # queries unclustered by default
    frac = crisp(doc_clusters=0.25).eval()
    assert frac.encode_docs(docs).lengths.tolist() == [3, 2, 5]


def test_untrained_encoders_return_their_input_vectors():
    """Before (issue 14): random init, ending below the untrained identity map; now both layouts start at it."""
    from zoo_task_retrieval import task
    from zoo_task_retrieval.data import load_synthetic

    data = load_synthetic("multi", n_docs=30, n_queries=6, dim=48)
    for layers in (0, 1):
        m = posthoc(doc_clusters=0, in_dim=48, d_model=48, out_dim=48, n_layers=layers).eval()
        with torch.no_grad():
            torch.testing.assert_close(m.encode_docs(data.docs).vectors, data.docs.vectors)
            torch.testing.assert_close(m.encode_queries(data.queries).vectors, data.queries.vectors)
        assert task.measure(m, data, k=10, latency_queries=0)[0]["ndcg@10"] == \
            task.measure(task.ExactMaxSim(), data, k=10, latency_queries=0)[0]["ndcg@10"]


def test_the_claim_runs_on_wiki_token_vectors_and_checks_training_first():
    from zoo_crisp import reproduce

    assert REPRODUCTION.checks[0].row == "trained unpruned" and REPRODUCTION.checks[0].margin > 0
    assert "wiki_split(4000, 1000, kind='token')" in REPRODUCTION.settings["split"]
    assert reproduce.FULL["in_dim"] == 384 and reproduce.SIZES == (8, 32)


def test_quick_reproduction_measures_crisp_against_posthoc_kmeans():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.rows) == ["untrained unpruned (raw MiniLM tokens)", "untrained k-means K=8", "untrained k-means K=32",
                            "bm25", "trained unpruned", "post-hoc k-means K=8", "post-hoc k-means K=32", "CRISP K=8",
                            "CRISP K=32"]
    assert [c["check"] for c in r.checks] == [
        "ndcg@10: trained unpruned - untrained unpruned (raw MiniLM tokens) >= 0.005",
        *[f"ndcg@10: CRISP K={k} - post-hoc k-means K={k} >= 0" for k in (8, 32)]]
    for k in (8,):
        crisp_, post = r.per_seed[f"CRISP K={k}"], r.per_seed[f"post-hoc k-means K={k}"]
        assert crisp_["vectors_per_doc"] == post["vectors_per_doc"] == [k, k]  # the same index size
        assert all(math.isfinite(x) for x in crisp_["ndcg@10"] + post["ndcg@10"])
    assert all(n > 8 for n in r.per_seed["trained unpruned"]["vectors_per_doc"])
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive")
