"""Conformance kit plus behaviour tests of Signed MaxSim, the sparse constructions and the model."""
from __future__ import annotations

import math

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_signed_maxsim.model import LateInteraction, signed_maxsim
from zoo_signed_maxsim.reproduce import REPRODUCTION
from zoo_signed_maxsim.sparse import encode_sparse, maxsim_exact, n_bits, random_sparse
from zoo_task_retrieval import task
from zoo_task_retrieval.data import VectorSets, load_synthetic

TINY = {"d_model": 16, "n_heads": 2, "ff": 32, "out_dim": 8}


def test_conformance(hub):
    check_plugin("signed-maxsim", overrides={"signed_maxsim_colbert": TINY, "maxsim_colbert": TINY})


def test_signed_maxsim_subtracts_the_negative_set():
    d = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.6, 0.8]]])
    dm = torch.ones(2, 2, dtype=torch.bool)
    q_pos = torch.tensor([[[1.0, 0.0]]])
    q_neg = torch.tensor([[[0.0, 1.0]]])
    qm = torch.ones(1, 1, dtype=torch.bool)
    # doc 0: max <+,d> = 1, max <-,d> = 1 -> 0; doc 1: 1 - 0.8
    torch.testing.assert_close(signed_maxsim(q_pos, q_neg, qm, d, dm), torch.tensor([[0.0, 0.2]]))
    # plain MaxSim is monotone: adding a document vector never lowers it
    more = torch.cat([d, torch.tensor([[[0.0, 1.0]], [[0.0, 1.0]]])], 1)
    assert (task.maxsim(q_pos, qm, more, torch.ones(2, 3, dtype=torch.bool)) >= task.maxsim(q_pos, qm, d, dm)).all()
    assert signed_maxsim(q_pos, q_neg, qm, more, torch.ones(2, 3, dtype=torch.bool))[0, 1] < 0.2


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("signed", [False, True])
def test_sparse_constructions_give_the_inner_product_in_the_dtype_used(signed, dtype):
    # exact in float32 too: the construction's error stays within a float dot product's own rounding (issue 14:
    # the former 4-d form cancelled terms of size M i^2 and was off by tens in float32 at n = 5000)
    n, k, g = 5000, 6, torch.Generator().manual_seed(0)
    eps = torch.finfo(dtype).eps
    for _ in range(30):
        iu, vu = random_sparse(n, k, signed, g)
        iv, vv = random_sparse(n, k, signed, g)
        iv[:3] = iu[:3]
        iv = torch.unique(iv)  # no repeated index
        vv = vv[: len(iv)]
        u = torch.zeros(n, dtype=torch.float64).index_put_((iu,), vu)
        v = torch.zeros(n, dtype=torch.float64).index_put_((iv,), vv)
        d = encode_sparse(iv, vv, "doc", n, signed=signed, dtype=dtype)
        assert d.dtype == dtype and d.shape == (len(iv) + 1, 1 + 2 * n_bits(2 * n if signed else n))  # k + 1 tokens
        if signed:
            qp, qn = encode_sparse(iu, vu, "query", n, signed=True, dtype=dtype)
            got = maxsim_exact(qp, d) - maxsim_exact(qn, d)
        else:
            got = maxsim_exact(encode_sparse(iu, vu, "query", n, dtype=dtype), d)
        assert abs(got - float(u @ v)) <= k * eps * float(u.abs() @ v.abs())
    with pytest.raises(ValueError, match="non-negative"):
        encode_sparse(torch.tensor([1]), torch.tensor([-1.0]), "query", n)
    with pytest.raises(ValueError, match=r"\[0, 10\)"):
        encode_sparse(torch.tensor([10]), torch.tensor([1.0]), "doc", 10)


def test_a_matching_token_scores_exactly_a_times_v():
    # on a match every product but a * v is an exact zero, so the token score is the float product itself
    a, v = torch.tensor([0.1]), torch.tensor([0.7, 0.3])
    q = encode_sparse(torch.tensor([4]), a, "query", 8)
    d = encode_sparse(torch.tensor([4, 5]), v, "doc", 8)
    scores = q @ d.T
    assert scores[0, 0].item() == (a * v[0]).item() and scores[0, 1] < 0 and scores[0, 2] == 0


def test_model_shapes_and_identical_initial_weights():
    torch.manual_seed(0)
    plain = LateInteraction(signed=False, **TINY)
    torch.manual_seed(0)
    signed = LateInteraction(signed=True, **TINY)
    shared = {k: v for k, v in signed.state_dict().items() if not k.startswith("neg_head")}
    assert all(torch.equal(v, plain.state_dict()[k]) for k, v in shared.items())
    sets = VectorSets.from_list([torch.randn(n, 64) for n in (3, 1, 2)])
    assert signed.encode_queries(sets).dim == 16 and plain.encode_queries(sets).dim == 8
    docs = signed.encode_docs(sets)
    assert torch.allclose(docs.vectors.norm(dim=1), torch.ones(6), atol=1e-5)
    with torch.no_grad():
        full = signed.score(signed.encode_queries(sets), docs)
    with torch.enable_grad():
        batch = signed.score(signed.encode_queries(sets), docs)
    torch.testing.assert_close(full, batch.detach())


def test_untrained_models_score_as_maxsim_on_the_raw_vectors():
    """Before (issue 14): random init, so the untrained encoder was far from MaxSim on the raw word vectors and a
    trained model was never shown to beat it; now both start at the identity map (negative head at zero)."""
    data = load_synthetic("negation", split="test", n_docs=40, n_queries=8, n_train_queries=20)
    raw = task.maxsim_all(data.queries, data.docs)
    for name in ("maxsim_colbert", "signed_maxsim_colbert"):
        model = zoo.create(name).eval()
        with torch.no_grad():
            torch.testing.assert_close(model.encode_docs(data.docs).vectors, data.docs.vectors)
            torch.testing.assert_close(model.score(model.encode_queries(data.queries), model.encode_docs(data.docs)), raw)


def test_evaluate_trains_the_signed_model():
    data = load_synthetic("negation", n_docs=40, n_queries=6, n_train_queries=60)
    r = zoo.evaluate(zoo.create("signed_maxsim_colbert", **TINY), data=data, steps=3, latency_queries=1)
    assert r.metrics["steps"] == 3 and r.config["trained"] and set(r.baselines) == {"exact-maxsim"}


def test_quick_reproduction_measures_signed_against_plain_maxsim():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    untrained = "untrained (identity init = MaxSim on raw word vectors)"
    assert list(r.rows) == ["exactness", untrained, "maxsim_colbert", "signed_maxsim_colbert"]
    assert [c["check"] for c in r.checks] == [
        "exactness maxsim_error/bound <= 1", "exactness signed_maxsim_error/bound <= 1",
        f"ndcg@10 test: maxsim_colbert - {untrained} >= 0.05", f"ndcg@10 test: signed_maxsim_colbert - {untrained} >= 0.05",
        "ndcg@10 shift: signed_maxsim_colbert - maxsim_colbert >= 0.1",
        "ndcg@10 negation_only: signed_maxsim_colbert - maxsim_colbert >= 0.1"]
    exact = r.per_seed["exactness"]
    assert max(exact["maxsim_error/bound"] + exact["signed_maxsim_error/bound"]) <= 1
    assert min(exact["maxsim_q+_only_error"]) > 1e-3  # signs matter: MaxSim of Q+ alone is not the inner product
    plain, signed = r.per_seed["maxsim_colbert"], r.per_seed["signed_maxsim_colbert"]
    assert plain["final_train_loss"] != signed["final_train_loss"]  # the same start, a different score in the loss
    assert all(math.isfinite(x) for s in ("shift", "negation_only") for x in plain[f"ndcg@10 {s}"] + signed[f"ndcg@10 {s}"])
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive")
