"""Conformance kit plus behaviour tests of MUVERA's FDEs and FDE retrieval."""
from __future__ import annotations

import inspect
import math

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_muvera.model import Muvera
from zoo_muvera.reproduce import REPRODUCTION, mean_vectors, wiki_available, wiki_tokens
from zoo_task_retrieval import task
from zoo_task_retrieval.data import VectorSets, load_synthetic, load_wiki

SMALL = {"reps": 2, "k_sim": 2, "d_proj": 4, "dim": 64}


def test_conformance(hub):
    check_plugin("muvera", overrides={"muvera_fde": SMALL})


def _one_hyperplane(model: Muvera) -> Muvera:
    """SimHash on the first coordinate only: partition 1 iff x[0] > 0."""
    with torch.no_grad():
        model.simhash.zero_()
        model.simhash[:, 0, 0] = 1.0
    return model


def test_query_sums_and_document_averages_per_partition():
    m = _one_hyperplane(Muvera(dim=3, reps=1, k_sim=1, d_proj=None, fill_empty=False))
    x = torch.tensor([[[1.0, 2, 0], [3, 0, 1], [-1, 1, 1], [0, 0, 0]]])
    mask = torch.tensor([[True, True, True, False]])
    q = m.fde(x, mask, query=True)
    d = m.fde(x, mask, query=False)
    # partition 0 (x0 <= 0) holds [-1, 1, 1]; partition 1 holds [1, 2, 0] and [3, 0, 1]; the padded row is ignored
    assert q.tolist() == [[-1.0, 1, 1, 4, 2, 1]]
    assert d.tolist() == [[-1.0, 1, 1, 2, 1, 0.5]]
    assert m.fde_dim(3) == 6


def test_empty_partitions_are_filled_with_the_hamming_nearest_vector():
    m = Muvera(dim=2, reps=1, k_sim=2, d_proj=None)
    with torch.no_grad():
        m.simhash.copy_(torch.eye(2)[None])  # bits = (x0 > 0, x1 > 0); partition = 2 * bit0 + bit1
    x = torch.tensor([[[1.0, 1.0], [-2.0, 3.0]]])  # partitions 3 (bits 11) and 1 (bits 01)
    d = m.fde(x, torch.ones(1, 2, dtype=torch.bool), query=False).view(4, 2)
    assert d[3].tolist() == [1.0, 1.0] and d[1].tolist() == [-2.0, 3.0]
    assert d[0].tolist() == [-2.0, 3.0]  # bits 00: Hamming 1 from 01, 2 from 11
    assert d[2].tolist() == [1.0, 1.0]  # bits 10: Hamming 1 from 11, 2 from 01
    q = m.fde(x, torch.ones(1, 2, dtype=torch.bool), query=True).view(4, 2)
    assert q[0].abs().sum() == 0 and q[2].abs().sum() == 0  # queries are never filled


def test_fde_inner_product_is_chamfer_when_partitions_separate_the_matches():
    # each query vector lands alone with its best document vector: <FDE_q, FDE_d> = R * Chamfer
    m = Muvera(dim=2, reps=3, k_sim=2, d_proj=None)
    with torch.no_grad():
        m.simhash.copy_(torch.eye(2).expand(3, 2, 2))
    q = torch.tensor([[[1.0, 0.5], [-0.5, -1.0]]])
    d = torch.tensor([[[2.0, 1.0], [-1.0, -2.0]]])
    ones = torch.ones(1, 2, dtype=torch.bool)
    fq, fd = m.fde(q, ones, query=True), m.fde(d, ones, query=False)
    chamfer = task.maxsim(q, ones, d, ones)
    torch.testing.assert_close(fq @ fd.T, 3 * chamfer)


def test_projections_follow_the_paper():
    m = Muvera(dim=16, reps=3, k_sim=4, d_proj=8, d_final=64)
    torch.testing.assert_close(m.proj.abs(), torch.full_like(m.proj, 1 / math.sqrt(8)))
    torch.testing.assert_close(m.final.abs(), torch.full_like(m.final, 1 / 8))
    assert 0.4 < float((m.proj > 0).float().mean()) < 0.6
    assert m.fde_dim() == 64 and Muvera().fde_dim() == 20 * 32 * 16
    x = torch.randn(5, 7, 16)
    out = m(x, torch.ones(5, 7, dtype=torch.bool))
    assert out.shape == (5, 64)
    # inputs narrower than dim use the leading rows of the same matrices
    assert m(x[..., :10], torch.ones(5, 7, dtype=torch.bool)).shape == (5, 64)
    with pytest.raises(ValueError, match="dim=17"):
        m(torch.randn(1, 2, 17), torch.ones(1, 2, dtype=torch.bool))
    assert torch.equal(Muvera(seed=3).simhash, Muvera(seed=3).simhash)


def test_search_reranks_fde_candidates_exactly():
    data = load_synthetic("multi", n_docs=120, n_queries=12)
    full = Muvera(dim=64, n_candidates=120, **{k: v for k, v in SMALL.items() if k != "dim"})
    index = full.build_index(data.docs)
    res = full.search(index, data.queries, 5)
    exact = task.ExactMaxSim().search(task.ExactMaxSim().build_index(data.docs), data.queries, 5)
    assert torch.equal(res.ids, exact.ids) and res.n_candidates.tolist() == [120] * 12
    few = Muvera(dim=64, n_candidates=3, **{k: v for k, v in SMALL.items() if k != "dim"})
    res = few.search(few.build_index(data.docs), data.queries, 5)
    assert res.n_candidates.tolist() == [3] * 12 and (res.ids[:, 3:] == -1).all()
    fde_bytes = task.index_nbytes(index["fde"])
    assert fde_bytes >= 120 * full.fde_dim() * 4
    assert task.index_nbytes(index) == fde_bytes + data.docs.to(torch.float32).nbytes  # FDEs + rerank vectors


def test_evaluate_sends_all_docs_when_candidates_exceed_the_corpus():
    r = zoo.evaluate(zoo.create("muvera_fde", **SMALL), n_docs=80, n_queries=8, latency_queries=1)
    assert set(r.baselines) == {"exact-maxsim"} and r.metrics["candidates"] == 80  # 100 > 80 docs: all


def test_quick_reproduction_counts_candidates_of_fde_the_sv_heuristic_and_mean_pooling():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.rows)[:4] == ["muvera_fde", "token-knn-union", "mean-pool", "exact-maxsim"]
    assert len(r.rows) == 4 + 8 + 7 + 8 + 3 and list(r.rows)[-3:] == [
        "synthetic muvera_fde", "synthetic token-knn-union", "synthetic mean-pool"]
    assert [c["check"] for c in r.checks] == ["log2_candidates@0.9: token-knn-union - muvera_fde >= 1"]
    fde, sv, mean = r.per_seed["muvera_fde"], r.per_seed["token-knn-union"], r.per_seed["mean-pool"]
    assert fde["candidates@0.9"] != sv["candidates@0.9"] and fde["recall_nn"] != sv["recall_nn"]
    assert all(x >= 0.9 for x in fde["recall_nn"] + mean["recall_nn"] + sv["recall_nn"])
    assert [2 ** x for x in fde["log2_candidates@0.9"]] == pytest.approx(fde["candidates@0.9"])
    for i in range(2):  # the FDE and mean-pool curves cross 0.9 at the N their rows report
        for n in (1, 2, 5, 10, 20, 50, 100, 200):
            assert (r.per_seed[f"fde N={n}"]["recall_nn"][i] >= 0.9) == (n >= fde["candidates@0.9"][i]), n
            assert (r.per_seed[f"mean N={n}"]["recall_nn"][i] >= 0.9) == (n >= mean["candidates@0.9"][i]), n
    assert r.per_seed["exact-maxsim"]["exact_recall@10"] == [1.0, 1.0] and fde["candidates"] == fde["candidates@0.9"]
    assert all(math.isfinite(x) for x in sv["log2_candidates@0.9"] + fde["log2_candidates@0.9"])
    if wiki_available():  # the FDE's matrices are the seed's; the wiki corpus and the SV heuristic are not
        assert fde["candidates@0.9"][0] != fde["candidates@0.9"][1] or fde["recall_nn"][0] != fde["recall_nn"][1]
        assert sv["candidates@0.9"][0] == sv["candidates@0.9"][1] and mean["candidates@0.9"][0] == mean["candidates@0.9"][1]


def test_the_claim_is_measured_on_real_wiki_token_vectors():
    # issue 14: the synthetic corpus is too easy for multi-vector claims (mean pooling tracks Chamfer there)
    s = REPRODUCTION.settings
    assert s["corpus"] == "wiki" and s["data"]["kind"] == "token" and s["data"]["encoder"] == "all-MiniLM-L6-v2"
    assert s["data"]["n_docs"] == 2000 and s["data"]["n_queries"] == 1000
    assert "d=384" in REPRODUCTION.claim and "synthetic 5000" not in REPRODUCTION.claim
    for label in ("muvera_fde", "token-knn-union", "mean-pool"):
        row = next(r for r in REPRODUCTION.rows if r.label == label)
        assert inspect.signature(row.fn).parameters["corpus"].default == "wiki" and "corpus" not in row.args


def test_mean_vectors_average_each_set():
    sets = VectorSets.from_list([torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[5.0, -1.0]])])
    assert mean_vectors(sets).tolist() == [[2.0, 3.0], [5.0, -1.0]]


@pytest.mark.skipif(not wiki_available(), reason="needs the wiki corpus packages")
def test_wiki_subset_keeps_the_first_leads_and_their_queries():
    data = wiki_tokens(1000, 40, 25)
    full = load_wiki(1000, "token")
    assert data.n_docs == 40 and data.n_queries == 25 and data.docs.dim == 384
    assert torch.equal(data.docs.vectors, full.docs.subset(range(40)).vectors)
    targets = [next(iter(rel)) for rel in data.qrels]
    assert all(t < 40 for t in targets)
    first = [i for i, rel in enumerate(full.qrels) if next(iter(rel)) < 40][:25]
    assert torch.equal(data.queries.vectors, full.queries.subset(first).vectors)


def test_vector_sets_encoding_matches_padded_forward():
    m = Muvera(**SMALL)
    sets = VectorSets.from_list([torch.randn(n, 64) for n in (3, 9, 1)])
    x, mask = sets.padded()
    torch.testing.assert_close(m.encode_docs(sets), m(x, mask))
    torch.testing.assert_close(m.encode_queries(sets), m.fde(x, mask, query=True))
