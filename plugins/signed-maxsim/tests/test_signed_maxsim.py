"""Conformance kit plus behaviour tests of Signed MaxSim, the sparse constructions and the model."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo_task_retrieval import task
from zoo_task_retrieval.data import VectorSets, load_synthetic
from zoo.testing import check_plugin
from zoo_signed_maxsim.model import LateInteraction, signed_maxsim
from zoo_signed_maxsim.sparse import encode_sparse, maxsim_exact, random_sparse

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


@pytest.mark.parametrize("signed", [False, True])
def test_sparse_constructions_give_the_inner_product(signed):
    g = torch.Generator().manual_seed(0)
    for _ in range(30):
        iu, vu = random_sparse(5000, 6, signed, g)
        iv, vv = random_sparse(5000, 6, signed, g)
        iv[:3] = iu[:3]
        iv = torch.unique(iv)  # no repeated index
        vv = vv[: len(iv)]
        u = torch.zeros(5000, dtype=torch.float64).index_put_((iu,), vu)
        v = torch.zeros(5000, dtype=torch.float64).index_put_((iv,), vv)
        d = encode_sparse(iv, vv, "doc", signed=signed)
        assert d.shape == (len(iv) + 1, 4)  # O(k) tokens: k + 1 for the document
        if signed:
            qp, qn = encode_sparse(iu, vu, "query", signed=True)
            got = maxsim_exact(qp, d) - maxsim_exact(qn, d)
        else:
            got = maxsim_exact(encode_sparse(iu, vu, "query"), d)
        assert got == pytest.approx(float(u @ v), abs=1e-7)
    with pytest.raises(ValueError, match="non-negative"):
        encode_sparse(torch.tensor([1]), torch.tensor([-1.0]), "query")


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


def test_training_and_quick_reproduce():
    data = load_synthetic("negation", n_docs=40, n_queries=6, n_train_queries=60)
    r = zoo.evaluate(zoo.create("signed_maxsim_colbert", **TINY), data=data, steps=3, latency_queries=1)
    assert r.metrics["steps"] == 3 and r.config["trained"] and set(r.baselines) == {"exact-maxsim"}
    from zoo_signed_maxsim.reproduce import reproduce

    out = reproduce(quick=True)
    assert out.table["exactness: maxsim (u, v >= 0)"]["max_abs_error"] < 1e-6
    assert out.table["exactness: maxsim, Q+ only (real u, v)"]["max_abs_error"] > 1e-3
    assert {"maxsim_colbert", "signed_maxsim_colbert"} <= set(out.table) and isinstance(out.passed, bool)
