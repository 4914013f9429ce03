"""Conformance kit plus behaviour tests of the lambda-orthogonal affine adapter."""
from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

import zoo
from zoo.testing import check_plugin
from zoo_lambda_orthogonality.model import AffineAdapter, orthogonality_gap
from zoo_lambda_orthogonality.reproduce import ranking_metrics
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData


def test_conformance(hub):
    check_plugin("lambda-orthogonality")


def test_orthogonality_gap_on_known_matrices():
    assert orthogonality_gap(torch.eye(4)).item() == 0.0
    q, _ = torch.linalg.qr(torch.randn(6, 6, generator=torch.Generator().manual_seed(0)))
    assert orthogonality_gap(q).item() < 1e-10
    assert orthogonality_gap(q[:, :3]).item() < 1e-10  # orthonormal columns (6 -> ... from 3 dims) count too
    assert orthogonality_gap(torch.diag(torch.tensor([1.0, 2.0]))).item() == pytest.approx(9.0)  # (4 - 1)^2


def test_adapter_starts_orthogonal_and_maps_affinely():
    torch.manual_seed(0)
    model = AffineAdapter(in_dim=8, out_dim=8, lam=0.5)
    assert orthogonality_gap(model.weight).item() < 1e-10 and torch.equal(model.linear.bias, torch.zeros(8))
    with torch.no_grad():
        model.linear.bias.fill_(0.3)
    x = torch.randn(5, 8)
    torch.testing.assert_close(model(x), x @ model.weight.T + 0.3)
    x3, mask = torch.randn(2, 3, 8), torch.tensor([[True, False, False], [True, True, True]])
    torch.testing.assert_close(model(x3, mask), model(torch.stack([x3[0, 0], x3[1].mean(0)])))
    torch.testing.assert_close(model.encode_queries(x), F.normalize(model(x), dim=-1))
    torch.testing.assert_close(model.encode_docs(x), F.normalize(x, dim=-1))  # the old gallery is not re-encoded
    with pytest.raises(ValueError, match="out_dim >= in_dim"):
        AffineAdapter(in_dim=8, out_dim=4, mode="orthogonal")


def test_loss_is_alignment_plus_lambda_gap():
    torch.manual_seed(0)
    model = AffineAdapter(in_dim=4, out_dim=4, lam=0.7)
    with torch.no_grad():
        model.linear.weight.mul_(1.5)
    q, d = model.encode_queries(torch.randn(5, 4)), model.encode_docs(torch.randn(5, 4))
    target, ignore = torch.arange(5), torch.zeros(5, 5, dtype=torch.bool)
    ce = F.cross_entropy(q @ d.T / 0.05, target)
    torch.testing.assert_close(model.loss(q, d, target, ignore), ce + 0.7 * orthogonality_gap(model.weight))
    model.lam = 0.0
    torch.testing.assert_close(model.loss(q, d, target, ignore), ce)


def _pairs(n: int = 200, dim: int = 8) -> RetrievalData:
    """'new' embeddings and their 'old' counterparts: old = new stretched along one axis, plus a shift."""
    g = torch.Generator().manual_seed(1)
    new = torch.randn(n, dim, generator=g)
    old = new * torch.tensor([3.0] + [1.0] * (dim - 1)) + 0.5
    return RetrievalData(new, old, [{i: 1.0} for i in range(n)], "single")


def test_lambda_trades_adaptation_for_orthogonality():
    data, gaps = _pairs(), {}
    for name, kw in {"affine": {"lam": 0.0}, "lambda": {"lam": 1.0}, "orthogonal": {"mode": "orthogonal"}}.items():
        torch.manual_seed(0)
        model = zoo.create("lambda_orthogonal_adapter", in_dim=8, out_dim=8, **kw)
        task.train(model, data, steps=60, batch_size=64, seed=0)
        gaps[name] = orthogonality_gap(model.weight.detach()).item()
    assert gaps["orthogonal"] < 1e-8 < gaps["lambda"] < gaps["affine"]


def test_tolerance_form_is_free_inside_the_tolerance():
    torch.manual_seed(0)
    model = AffineAdapter(in_dim=4, out_dim=4, lam=0.5, mode="tolerance", hinge_weight=10.0)
    assert model.regularizer().item() == 0.0  # orthogonal start: inside the ball
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(4) * 1.1)  # ||A^T A - I||_F = 2 * 0.21 = 0.42 <= 0.5
    assert model.regularizer().item() == 0.0
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(4) * 1.5)  # ||A^T A - I||_F = 2 * 1.25 = 2.5
    assert model.regularizer().item() == pytest.approx(10.0 * (2.5 - 0.5) ** 2, rel=1e-5)
    model.linear.weight.grad = None
    model.regularizer().backward()
    assert torch.isfinite(model.linear.weight.grad).all()


def test_cosine_alignment_lets_the_free_map_fit_best():
    # issue 14: under the contrastive alignment the free affine map was the worst fit of the data it was fitted on;
    # under the protocol's cosine regression it is the best fit (old = new stretched along one axis plus a shift)
    from zoo_lambda_orthogonality.reproduce import adapter_row, fit_adapter

    data = _pairs(n=256)
    new, old = data.queries, data.docs
    cos = {}
    for name, kw in {"affine": {"lam": 0.0}, "lambda": {"lam": 1.0}, "orthogonal": {"mode": "orthogonal"}}.items():
        torch.manual_seed(0)
        model = fit_adapter(zoo.create("lambda_orthogonal_adapter", in_dim=8, out_dim=8, **kw), new, old,
                            torch.zeros(256, dtype=torch.long), steps=400)
        with torch.no_grad():
            cos[name] = F.cosine_similarity(model(new), old).mean().item()
    assert cos["affine"] > 0.99 and cos["affine"] > max(cos["lambda"], cos["orthogonal"]) + 0.1
    import inspect

    assert inspect.signature(adapter_row).parameters["alignment"].default == "cosine"


def test_ranking_metrics_on_known_rankings():
    q = torch.tensor([[1.0, 0.0], [1.0, 0.2]])
    g = torch.tensor([[0.9, 0.1], [0.1, 0.9], [0.8, 0.3]])
    # query 0 (label 0): gallery 0 first, a hit; query 1 (label 1): order 0, 2, 1, hits at ranks 2 and 3
    m = ranking_metrics(q, g, torch.tensor([0, 1]), torch.tensor([0, 1, 1]))
    assert m["top1"] == 0.5 and m["map"] == pytest.approx((1.0 + (1 / 2 + 2 / 3) / 2) / 2)


def test_quick_reproduction_compares_the_adapters():
    import math

    from zoo.claims import run_claim
    from zoo_lambda_orthogonality.reproduce import REPRODUCTION, with_alignment

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table)[:3] == ["old -> old (reference)", "new -> old, no adapter", "affine (lam=0)"]
    assert len(r.table) == 11 and r.seeds == [0, 1] and "tolerance (tau=1)" in r.table
    assert [c["check"] for c in r.checks] == ["compat_map_seen: lambda-orthogonal (lam=1) - orthogonal >= 0",
                                              "self_knn_top1: lambda-orthogonal (lam=1) - new -> old, no adapter >= -0.01"]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    # the strict adapter is orthogonal, so it keeps the new model's own kNN ranking exactly; lambda = 1 is not
    assert max(r.per_seed["orthogonal"]["orth_gap"]) < 1e-4 < min(r.per_seed["lambda-orthogonal (lam=1)"]["orth_gap"])
    assert r.per_seed["orthogonal"]["self_knn_top1"] == pytest.approx(r.per_seed["new -> old, no adapter"]["self_knn_top1"])
    assert r.per_seed["lambda-orthogonal (lam=1)"]["compat_top1_seen"] != r.per_seed["orthogonal"]["compat_top1_seen"]
    assert with_alignment("class").rows[2].args["alignment"] == "class"
