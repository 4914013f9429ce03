"""Conformance kit plus behaviour tests of the free-embedding bound and the LIMIT-style generator."""
from __future__ import annotations

import math

import torch

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_limit_embed_bound.data import evaluate_encoder, limit_dataset, to_vectors
from zoo_limit_embed_bound.model import (
    SingleVector,
    _infonce,
    all_k_subsets_qrels,
    critical_n,
    fit_polynomial,
    optimise_free_embeddings,
    topk_accuracy,
)
from zoo_limit_embed_bound.reproduce import REPRODUCTION


def test_conformance(hub):
    check_plugin("limit-embed-bound")


def test_qrels_cover_every_pair_once():
    a = all_k_subsets_qrels(6)
    assert a.shape == (15, 6) and torch.equal(a.sum(1), torch.full((15,), 2.0))
    assert len({tuple(r.tolist()) for r in a}) == 15
    assert torch.equal(a.sum(0), torch.full((6,), 5.0))  # each doc is in n - 1 pairs


def test_topk_accuracy_counts_ties_as_errors():
    qrels = torch.tensor([[1.0, 1.0, 0.0]])
    assert topk_accuracy(torch.tensor([[2.0, 1.0, 0.0]]), qrels) == 1.0
    assert topk_accuracy(torch.tensor([[2.0, 1.0, 1.0]]), qrels) == 0.0
    assert topk_accuracy(torch.tensor([[2.0, 0.0, 1.0]]), qrels) == 0.0


def test_infonce_on_known_scores():
    scores = torch.tensor([[1.0, 0.0, 0.0]])
    rel = torch.tensor([[True, True, False]])
    lse = math.log(math.e + 2)
    want = ((lse - 1.0) + lse) / 2  # each relevant doc is a target against all docs
    assert math.isclose(_infonce(scores, rel, 1.0).item(), want, rel_tol=1e-6)
    pooled = lse - math.log(math.e + 1)
    assert math.isclose(_infonce(scores, rel, 1.0, pooled=True).item(), pooled, rel_tol=1e-6)


def test_free_embeddings_solve_small_n_and_fail_beyond_the_bound():
    res = optimise_free_embeddings(all_k_subsets_qrels(3), dim=2, max_steps=150, patience=50, lr=0.05, temperature=0.05)
    assert res.solved and torch.allclose(res.docs.norm(dim=1), torch.ones(3), atol=1e-5)
    # d = 1: every query vector is +-1 times a scalar, so the top-2 sets are only the two ends of the line
    n, tried = critical_n(1, max_steps=200, patience=50, lr=0.05, temperature=0.05)
    assert n <= 3 and tried[n + 1] < 1.0


def test_fit_polynomial_recovers_a_cubic():
    ds = [2.0, 3.0, 4.0, 5.0, 6.0]
    coef = fit_polynomial(ds, [1 + 2 * d + 0.5 * d ** 3 for d in ds])
    assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(coef, [1.0, 2.0, 0.0, 0.5], strict=True))


def test_generator_structure_and_vectors():
    ds = limit_dataset(n_core=6, n_queries=10, seed=1)
    assert len(ds.queries) == 10 and len(ds.docs) == 6
    assert all(len(r) == 2 for r in ds.qrels) and len({tuple(sorted(r)) for r in ds.qrels}) == 10
    for qi, rel in enumerate(ds.qrels):  # only the relevant docs like the query's attribute
        liking = {d for d, attrs in enumerate(ds.doc_attrs) if ds.query_attrs[qi] in attrs}
        assert liking == set(rel) and all(ds.attributes[ds.query_attrs[qi]] in ds.docs[d] for d in rel)
    big = limit_dataset(n_core=4, n_distractors=3, distractor_attrs=5)
    assert len(big.docs) == 7 and len(big.doc_attrs[-1]) == 5
    data = to_vectors(ds, dim=8)
    assert data.docs.lengths.tolist() == [len(a) for a in ds.doc_attrs]
    assert torch.allclose(data.docs.vectors.norm(dim=1), torch.ones(len(data.docs.vectors)))


def test_evaluate_encoder_and_single_vector_shapes():
    ds = limit_dataset(n_core=4)
    const = evaluate_encoder(lambda texts: torch.ones(len(texts), 3), ds, ks=(2,))
    assert 0.0 <= const["recall@2"] <= 1.0
    m = SingleVector(in_dim=8, dim=3)
    out = m.encode_docs(to_vectors(ds, dim=8).docs)
    assert out.shape == (4, 3) and torch.allclose(out.norm(dim=1), torch.ones(4), atol=1e-6)


def test_quick_reproduction_measures_single_vectors_against_maxsim():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert len(r.rows) == 5 + 3 + 3 * 3 and r.seeds == [0, 1]
    bm25 = r.per_seed["bm25 (texts)"]["recall@2"]  # issue 14: the lexical baseline, next to single and multi-vector
    assert all(0.0 <= x <= 1.0 for x in bm25)
    assert [c["check"] for c in r.checks] == [
        "critical_n: free embedding d=3 - free embedding d=2 >= 0", "critical_n: free embedding d=4 - free embedding d=3 >= 0",
        "critical_n: free embedding d=5 - free embedding d=4 >= 0", "critical_n: free embedding d=6 - free embedding d=5 >= 0",
        "critical_n: free embedding d=6 - free embedding d=2 >= 1", "single free embedding d=4 top2_failures >= 1",
        *[f"recall@2: multi-vector MaxSim d={d} - single free embedding d={d} >= 0" for d in (4, 8, 16)]]
    assert r.per_seed["free embedding d=2"]["critical_n"] == [3.0, 3.0]  # 2-d vectors order 3 docs, never 4
    for d in (4, 8, 16):
        assert r.per_seed[f"multi-vector MaxSim d={d}"]["recall@2"] == [1.0, 1.0]  # an exact token match scores highest
    free = r.per_seed["single free embedding d=4"]
    assert free["top2_failures"] == [round((1 - a) * 55) for a in free["top2_exact"]]
    assert all(math.isfinite(x) for x in free["recall@2"] + r.per_seed["single trained encoder d=4"]["recall@2"])
    assert r.per_seed["single trained encoder d=4"]["recall@2"] != r.per_seed["multi-vector MaxSim d=4"]["recall@2"]
