"""Conformance kit plus behaviour tests of the Gaussian (-KL) retriever, its MIPS rewrite and its baseline."""
from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import Normal, kl_divergence
from torch.nn import functional as F

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_kl_dense_retrieval.model import (
    DotRetriever,
    MultivariateRetriever,
    ann_doc_vectors,
    ann_query_vectors,
    gaussian_kl_score,
)
from zoo_kl_dense_retrieval.reproduce import REPRODUCTION
from zoo_task_retrieval import data as data_mod
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData

TINY = {"kl_dense_retrieval": {"in_dim": 64, "dim": 7}, "dot_dense_retrieval": {"in_dim": 64, "dim": 16}}


def test_conformance(hub):
    check_plugin("kl-dense-retrieval", overrides=TINY)


def _gaussians(n: int, k: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, k, generator=g, dtype=torch.float64), torch.rand(n, k, generator=g, dtype=torch.float64) + 0.05


def test_score_is_minus_kl_of_query_from_document():
    # one dimension, by hand: KL(N(0, 1) || N(0, 4)) = 1/2 (log 4 - 1 + 1/4)
    got = gaussian_kl_score(torch.zeros(1, 1), torch.ones(1, 1), torch.zeros(1, 1), torch.full((1, 1), 4.0))
    assert got.item() == pytest.approx(-0.5 * (math.log(4) - 1 + 0.25), rel=1e-6)
    # the direction matters: KL(N(0, 4) || N(0, 1)) is a different number
    other = gaussian_kl_score(torch.zeros(1, 1), torch.full((1, 1), 4.0), torch.zeros(1, 1), torch.ones(1, 1))
    assert other.item() == pytest.approx(-0.5 * (-math.log(4) - 1 + 4), rel=1e-6)
    # many dimensions, against torch.distributions
    mq, vq = _gaussians(3, 6, 0)
    md, vd = _gaussians(5, 6, 1)
    ref = torch.stack([torch.stack([kl_divergence(Normal(mq[i], vq[i].sqrt()), Normal(md[j], vd[j].sqrt())).sum()
                                    for j in range(5)]) for i in range(3)])
    torch.testing.assert_close(gaussian_kl_score(mq, vq, md, vd), -ref)
    assert gaussian_kl_score(mq, vq, mq, vq).diagonal().abs().max() < 1e-12  # KL(p || p) = 0


def test_ann_vectors_give_minus_kl_exactly():
    mq, vq = _gaussians(4, 9, 2)
    md, vd = _gaussians(11, 9, 3)
    u, v = ann_query_vectors(mq, vq), ann_doc_vectors(md, vd)
    assert u.shape == (4, 2 * 9 + 2) and v.shape == (11, 2 * 9 + 2)
    torch.testing.assert_close(u @ v.T, gaussian_kl_score(mq, vq, md, vd), rtol=1e-12, atol=1e-12)


def test_model_heads_shapes_and_forward_contract():
    torch.manual_seed(0)
    model = MultivariateRetriever(in_dim=16, dim=5).eval()
    assert model.mean.bias is None and model.var.bias is None
    h = torch.randn(6, 16)
    mu, var = model.distribution(h)
    assert mu.shape == var.shape == (6, 5) and (var > 0).all()
    torch.testing.assert_close(var, F.softplus(model.var(h), beta=2.5))
    # forward: a token set is mean-pooled over its valid tokens, then mapped to the document's index vector
    x, mask = torch.randn(2, 4, 16), torch.tensor([[True, True, False, False], [True, True, True, True]])
    pooled = torch.stack([x[0, :2].mean(0), x[1].mean(0)])
    torch.testing.assert_close(model(x, mask), model.to_ann_vector(pooled, "doc"))
    with pytest.raises(ValueError, match="role"):
        model.to_ann_vector(h, "passage")


def test_faiss_search_ranks_by_minus_kl_and_loss_is_cross_entropy():
    torch.manual_seed(0)
    model = MultivariateRetriever(in_dim=16, dim=5).eval()
    docs, queries = torch.randn(40, 16), torch.randn(6, 16)
    with torch.no_grad():
        scores = model.score(model.encode_queries(queries), model.encode_docs(docs))
        got = model.search(model.build_index(docs), queries, 5)
    assert torch.equal(got.ids, scores.topk(5, dim=1).indices)
    torch.testing.assert_close(got.scores, scores.topk(5, dim=1).values, rtol=1e-4, atol=1e-4)
    q, d = model.encode_queries(queries), model.encode_docs(docs[:6])
    target, ignore = torch.arange(6), torch.zeros(6, 6, dtype=torch.bool)
    torch.testing.assert_close(model.loss(q, d, target, ignore), F.cross_entropy(model.score(q, d), target))


def test_dot_baseline_is_cosine_of_one_linear_head():
    torch.manual_seed(0)
    model = DotRetriever(in_dim=16, dim=8)
    x = torch.randn(3, 16)
    enc = model.encode_docs(x)
    torch.testing.assert_close(enc, F.normalize(x @ model.proj.weight.T, dim=-1))
    assert torch.equal(model.encode_queries(x), enc)  # one shared encoder


def test_wiki_split_keeps_articles_and_queries_apart(monkeypatch):
    docs = torch.arange(10, dtype=torch.float32)[:, None].repeat(1, 3)
    target = [0, 2, 3, 5, 7, 9]  # articles with a query
    fake = RetrievalData(docs[target] + 0.5, docs, [{t: 1.0} for t in target], "single", titles=[str(i) for i in range(10)])
    monkeypatch.setattr(data_mod, "load_wiki", lambda n, kind: fake)
    split = data_mod.wiki_split(10, 4)
    assert split.n_docs == 4 and split.train.n_docs == 6
    assert split.qrels == [{0: 1.0}, {2: 1.0}, {3: 1.0}] and split.train.qrels == [{1: 1.0}, {3: 1.0}, {5: 1.0}]
    assert torch.equal(split.train.docs[1], docs[5]) and torch.equal(split.train.queries[0], docs[5] + 0.5)
    with pytest.raises(ValueError, match="n_test_docs"):
        data_mod.wiki_split(10, 10)


def test_training_improves_the_kl_model():
    data = data_mod.synthetic_split(n_docs=120, n_queries=20, dim=64)
    torch.manual_seed(0)
    model = zoo.create("kl_dense_retrieval", in_dim=64, dim=15)
    before, _ = task.measure(model.eval(), data.train, k=10, latency_queries=0)
    stats = task.train(model, data, steps=40, batch_size=32, seed=0)
    after, _ = task.measure(model.eval(), data.train, k=10, latency_queries=0)
    assert stats["steps"] == 40 and after["mrr"] > before["mrr"]


def test_quick_reproduction_measures_kl_against_the_dot_head():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.rows)[:3] == ["kl_dense_retrieval", "dot_dense_retrieval", "raw MiniLM 384-d (task exact-dense, untrained)"]
    assert len(r.rows) == 7 and r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == ["kl_dense_retrieval rewrite_error <= 0.0001",
                                              "ndcg@10: kl_dense_retrieval - dot_dense_retrieval >= 0.01"]
    kl, dot = r.per_seed["kl_dense_retrieval"], r.per_seed["dot_dense_retrieval"]
    assert max(kl["rewrite_error"]) < 1e-10  # the rewrite is exact, not merely within the margin
    assert kl["final_train_loss"] != dot["final_train_loss"] and kl["mrr"] != dot["mrr"]  # two different models
    assert all(math.isfinite(x) for x in kl["ndcg@10"] + dot["ndcg@10"] + kl["hnsw_top10_overlap"])
    assert "rewrite_error" not in dot and r.verdict in ("reproduced", "not reproduced", "inconclusive")
