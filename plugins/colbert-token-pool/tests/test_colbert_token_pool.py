"""Conformance kit plus behaviour tests of Ward token pooling and random pruning."""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_colbert_token_pool.model import RandomTokenPrune, TokenPool, ward_pool
from zoo_colbert_token_pool.reproduce import REPRODUCTION
from zoo_task_retrieval import task
from zoo_task_retrieval.data import load_synthetic


def test_conformance(hub):
    check_plugin("colbert-token-pool")


def _groups(seed: int = 0) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """A [CLS]-like first vector, then 3 tight groups of 3, 2 and 4 vectors around distinct directions."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.eye(8)[:3]
    groups = [F.normalize(c + 0.01 * torch.randn(n, 8, generator=g), dim=-1) for c, n in zip(centers, (3, 2, 4), strict=True)]
    cls = F.normalize(torch.ones(1, 8), dim=-1)
    return torch.cat([cls, *groups]), groups


def test_ward_pooling_merges_each_group_into_its_normalised_mean():
    tokens, groups = _groups()
    pooled = ward_pool(tokens, pool_factor=3, protected_tokens=1)  # 9 // 3 = 3 clusters
    assert pooled.shape == (4, 8)
    assert torch.equal(pooled[0], tokens[0])  # the protected token is kept as is
    want = torch.stack([F.normalize(grp.mean(0), dim=0) for grp in groups])
    match = pooled[1:] @ want.T  # each pooled vector is one group's normalised mean
    assert torch.allclose(match.max(1).values, torch.ones(3), atol=1e-6)
    assert sorted(match.argmax(1).tolist()) == [0, 1, 2]
    assert torch.allclose(pooled.norm(dim=1), torch.ones(4), atol=1e-6)


def test_cluster_counts_and_identity_cases():
    tokens = F.normalize(torch.randn(11, 5, generator=torch.Generator().manual_seed(1)), dim=-1)
    for factor, want in ((1, 11), (2, 1 + 5), (3, 1 + 3), (4, 1 + 2), (20, 1 + 1)):
        assert len(ward_pool(tokens, factor)) == want, factor
    assert torch.equal(ward_pool(tokens, 1), tokens)
    assert torch.equal(ward_pool(tokens[:2], 2), tokens[:2])  # one vector after the protected one: nothing to pool
    assert len(ward_pool(tokens, 2, protected_tokens=0)) == 5


def test_random_pruning_keeps_original_vectors_at_the_same_count():
    tokens, _ = _groups()
    pruned = RandomTokenPrune(pool_factor=3, seed=4).reduce_one(tokens, doc_id=7)
    again = RandomTokenPrune(pool_factor=3, seed=4).reduce_one(tokens, doc_id=7)
    assert torch.equal(pruned, again) and len(pruned) == len(ward_pool(tokens, 3))
    assert torch.equal(pruned[0], tokens[0])
    assert all(any(torch.equal(p, t) for t in tokens) for p in pruned)


def test_pooling_shrinks_the_index_and_factor_one_is_exact_maxsim():
    data = load_synthetic("multi", n_docs=60, n_queries=10)
    exact = task.ExactMaxSim()
    ref = exact.search(exact.build_index(data.docs), data.queries, 10)
    one = TokenPool(1)
    assert torch.equal(one.search(one.build_index(data.docs), data.queries, 10).ids, ref.ids)
    full = task.index_nbytes(exact.build_index(data.docs))
    two = task.index_nbytes(TokenPool(2).build_index(data.docs))
    assert 0.45 < two / full < 0.6  # about half the vectors (the first token is kept)
    x, mask = data.docs.padded([0, 1])
    out = TokenPool(2)(x, mask)
    assert out["mask"].sum(1).tolist() == [1 + (int(n) - 1) // 2 for n in data.docs.lengths[:2]]


def test_evaluate_puts_the_pooled_index_next_to_exact_maxsim():
    r = zoo.evaluate("token_pool_ward", n_docs=50, n_queries=6, latency_queries=1)
    assert set(r.baselines) == {"exact-maxsim"}
    assert r.metrics["index_bytes"] < r.baselines["exact-maxsim"]["index_bytes"]


def test_quick_reproduction_measures_pooling_against_unpooled_maxsim():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    labels = ["ward pool 1"] + [f"{m} {f}" for f in (2, 3, 4) for m in ("ward pool", "random prune")]
    assert list(r.rows) == labels and r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == [f"ward pool {f} ndcg_loss <= {v:g}" for f, v in ((2, 0.03), (3, 0.05), (4, 0.05))]
    assert r.per_seed["ward pool 1"]["ndcg_loss"] == [0.0, 0.0]  # the reference row
    for f in (2, 3, 4):
        ward, rand = r.per_seed[f"ward pool {f}"], r.per_seed[f"random prune {f}"]
        assert ward["index_fraction"] == rand["index_fraction"] and all(x < 0.65 for x in ward["index_fraction"])
        assert ward["ndcg_loss"] != rand["ndcg_loss"]  # same vector counts, different vectors kept
        assert all(math.isfinite(x) for x in ward["ndcg_loss"] + rand["ndcg_loss"])
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive")
