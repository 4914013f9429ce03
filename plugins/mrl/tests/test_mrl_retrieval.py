"""Adaptive retrieval with Matryoshka embeddings: the index, the cost model, mAP@10, the MRL projection."""
from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from zoo.claims import run_claim
from zoo_mrl.reproduce_retrieval import RETRIEVAL
from zoo_mrl.retrieval import MatryoshkaProjection, PrefixIndex, adaptive_retrieve, knn, map_at_k, search_flops


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


def test_quick_adaptive_retrieval_claim_runs_on_the_harness():
    r = run_claim(RETRIEVAL, quick=True, seeds=(0, 1))
    assert [c["check"] for c in r.checks] == [f"{c}: best at >= 4x fewer multiply-adds quality - exact >= -0.01"
                                              for c in ("digits", "wiki")]
    exact = r.per_seed["digits: exact search, D=64"]
    assert exact["flops/query"] == [1347 * 64] * 2 and exact["top10 overlap"] == [1.0, 1.0]
    short = r.per_seed["digits: shortlist K=50 at m=8, rerank at D=64"]
    assert short["flops speed-up"] == [pytest.approx(1347 * 64 / (1347 * 8 + 50 * 64))] * 2
    assert [q - e for q, e in zip(short["quality"], exact["quality"], strict=True)] == pytest.approx(short["quality - exact"])
    for corpus, grid in (("digits", ((2, 50), (4, 50), (8, 50), (16, 50))),
                         ("wiki", ((16, 100), (32, 100), (64, 100), (32, 200)))):
        dim = 64 if corpus == "digits" else 384
        points = [r.per_seed[f"{corpus}: shortlist K={k} at m={m}, rerank at D={dim}"] for m, k in grid]
        for i in range(2):  # the best row is the best grid point with >= 4x fewer multiply-adds, recomputed here
            eligible = [p["quality - exact"][i] for p in points if p["flops speed-up"][i] >= 4]
            assert r.per_seed[f"{corpus}: best at >= 4x fewer multiply-adds"]["quality - exact"][i] == max(eligible, default=-1)
    assert r.per_seed["digits: best at >= 4x fewer multiply-adds"]["eligible points"] == [3.0, 3.0]  # m = 2, 4, 8
    assert set(r.rows["digits MRL: exact kNN mAP@10 at m"]) == {f"m={m}" for m in (2, 4, 8, 16, 32, 64)}
    assert r.per_seed["digits MRL: exact kNN mAP@10 at m"] != r.per_seed["digits FF (one model per m): exact kNN mAP@10"]
    assert r.per_seed["wiki MRL projection: exact nDCG@10 at m"] != r.per_seed["wiki raw MiniLM: exact nDCG@10 at m"]
