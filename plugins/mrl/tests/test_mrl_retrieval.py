"""Adaptive retrieval with Matryoshka embeddings: the index, the cost model, mAP@10, the MRL projection."""
from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

import zoo
from zoo_mrl.reproduce_retrieval import MatryoshkaProjection
from zoo_mrl.retrieval import PrefixIndex, adaptive_retrieve, knn, map_at_k, search_flops


def test_prefix_index_matches_knn_and_adaptive_retrieve():
    g = torch.Generator().manual_seed(0)
    db, q = torch.randn(500, 24, generator=g), torch.randn(300, 24, generator=g)
    index = PrefixIndex(db, dims=(4, 8))
    assert len(index) == 500
    assert torch.equal(index.search(q, 7), knn(q, db, 7, metric="cosine"))
    assert torch.equal(index.search(q, 7, dim=8), knn(q, db, 7, dim=8, metric="cosine"))
    got = index.adaptive(q, shortlist_dim=4, k_shortlist=30, k=5, chunk=64)  # several chunks
    assert torch.equal(got, adaptive_retrieve(q, db, shortlist_dim=4, k_shortlist=30, k=5, metric="cosine"))
    # a shortlist as large as the database is exact search
    assert torch.equal(index.adaptive(q, 4, 500, 5), index.search(q, 5))


def test_search_flops_counts_shortlist_and_rerank():
    assert search_flops(1000, 2048) == 2_048_000
    assert search_flops(1000, 16, 200, 2048) == 1000 * 16 + 200 * 2048
    assert search_flops(1000, 16) == 16_000


def test_map_at_k_on_known_rankings():
    db_labels = torch.tensor([1, 0, 1, 1, 0])
    # relevant (label 1) at ranks 1 and 3 of 3: AP@3 = (1/1 + 2/3) / min(3, 3 relevant)
    assert map_at_k(torch.tensor([[0, 1, 2]]), torch.tensor([1]), db_labels, k=3) == pytest.approx((1 + 2 / 3) / 3)
    # only 2 items of label 0 exist: normalise by 2, not k
    assert map_at_k(torch.tensor([[1, 4, 0]]), torch.tensor([0]), db_labels, k=3) == pytest.approx(1.0)
    assert map_at_k(torch.tensor([[0, 2, 3]]), torch.tensor([0]), db_labels, k=3) == 0.0


def test_matryoshka_projection_loss_sums_every_prefix():
    torch.manual_seed(0)
    head = MatryoshkaProjection(dim=8, nesting=(2, 4, 8))
    assert torch.equal(head.proj.weight, torch.eye(8))
    q, d = head(torch.randn(5, 8)), head(torch.randn(5, 8))
    target, ignore = torch.arange(5), torch.zeros(5, 5, dtype=torch.bool)
    expected = sum(F.cross_entropy(F.normalize(q[:, :m], dim=-1) @ F.normalize(d[:, :m], dim=-1).T / 0.05, target)
                   for m in (2, 4, 8))
    torch.testing.assert_close(head.loss(q, d, target, ignore), expected)


def test_quick_adaptive_retrieval_reproduction_is_well_formed():
    from zoo_mrl.reproduce_retrieval import reproduce

    out = reproduce(quick=True)
    assert isinstance(out, zoo.ClaimResult) and out.plugin == "mrl" and isinstance(out.passed, bool)
    exact = out.table["digits MRL (mAP@10): exact search, D=64"]
    assert exact["flops/query"] == 1347 * 64 and exact["top10 overlap"] == 1.0
    short = out.table["digits MRL (mAP@10): shortlist K=50 at m=8, rerank at D=64"]
    assert short["flops speed-up"] == pytest.approx(1347 * 64 / (1347 * 8 + 50 * 64))
    assert 0.0 <= short["top10 overlap"] <= 1.0 and 0.0 <= short["quality"] <= 1.0
    assert set(out.table["digits MRL: exact kNN mAP@10 at m"]) == {f"m={m}" for m in (2, 4, 8, 16, 32, 64)}
