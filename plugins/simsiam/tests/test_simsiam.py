"""simsiam: conformance, the loss's closed form, the stop-gradient's exact effect on the gradients, the paper's heads
and optimiser rule, and a quick run of the claim."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import zoo
from zoo_simsiam.model import PAPER, SimSiam, negative_cosine
from zoo_simsiam.reproduce import REPRODUCTION, _simsiam, baseline_row, simsiam_row
from zoo_task_ssl_probe import task

TINY = {"width": 4, "dim": 16, "pred_dim": 4}


def test_conformance(check_plugin):
    check_plugin("simsiam", overrides={"simsiam_cnn": TINY})


def test_loss_closed_form():
    torch.manual_seed(0)
    m = SimSiam(**TINY).train()
    x1, x2 = torch.rand(8, 1, 8, 8), torch.rand(8, 1, 8, 8)
    z1, z2 = m.project(x1), m.project(x2)
    p1, p2 = m.predictor(z1), m.predictor(z2)
    want = -0.5 * (F.cosine_similarity(p1, z2).mean() + F.cosine_similarity(p2, z1).mean())
    assert torch.allclose(m.ssl_loss(x1, x2), want, atol=1e-6)
    # without a predictor, identical views give the minimum -1 exactly (same BN batch statistics)
    flat = SimSiam(**TINY, predictor=False).train()
    assert float(flat.ssl_loss(x1, x1).detach()) == pytest.approx(-1.0, abs=1e-6)
    assert float(negative_cosine(torch.tensor([[1.0, 1.0]]), torch.tensor([[-2.0, -2.0]]))) == pytest.approx(1.0)


def _grads(m: SimSiam, loss: torch.Tensor) -> list[torch.Tensor]:
    m.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in m.encoder.parameters()]


@pytest.mark.parametrize("stop_gradient", [True, False])
def test_stop_gradient_cuts_the_target_branch_exactly(stop_gradient):
    torch.manual_seed(1)
    m = SimSiam(**TINY, stop_gradient=stop_gradient).train()
    x1, x2 = torch.rand(8, 1, 8, 8), torch.rand(8, 1, 8, 8)
    got = _grads(m, m.ssl_loss(x1, x2))
    z1, z2 = m.project(x1), m.project(x2)
    p1, p2 = m.predictor(z1), m.predictor(z2)
    detached = _grads(m, 0.5 * negative_cosine(p1, z2.detach()) + 0.5 * negative_cosine(p2, z1.detach()))
    same = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, detached, strict=True))
    assert same is stop_gradient  # with the stop-gradient the targets pass no gradient; without it they do


def test_paper_heads_and_optimiser_rule():
    m = SimSiam()  # CPU default: 256-d projector, 64-d predictor bottleneck (the paper's 2048 / 512 ratio)
    linears = [mod for mod in m.projector if isinstance(mod, nn.Linear)]
    norms = [mod for mod in m.projector if isinstance(mod, nn.BatchNorm1d)]
    assert len(linears) == 3 and len(norms) == 3 and not isinstance(m.projector[-1], nn.ReLU)
    assert norms[-1].weight is None and all(n.weight is not None for n in norms[:-1])
    assert m.predictor[0].out_features * 4 == m.predictor[-1].out_features == 256
    assert not isinstance(m.predictor[-1], (nn.BatchNorm1d, nn.ReLU))
    assert PAPER["pred_dim"] * 4 == PAPER["dim"]
    d = SimSiam(optimizer="sgd").ssl_defaults  # the paper's rule; AdamW is the CPU default (README)
    assert (d["optimizer"], d["lr"], d["momentum"], d["weight_decay"]) == ("sgd", 0.05 * 128 / 256, 0.9, 1e-4)
    assert m.ssl_defaults["optimizer"] == "adamw" and m.ssl_defaults["weight_decay"] == 1e-4
    groups = m.ssl_param_groups()
    assert groups[1]["fixed_lr"] and {id(p) for p in groups[1]["params"]} == {id(p) for p in m.predictor.parameters()}
    assert SimSiam(optimizer="sgd", batch=512).ssl_defaults["lr"] == 0.1
    with pytest.raises(ValueError, match="sgd"):
        SimSiam(optimizer="lars")
    with pytest.raises(ValueError, match=">= 1"):
        SimSiam(dim=0)


def test_quick_claim_rows_differ():
    assert [r.label for r in REPRODUCTION.rows] == ["simsiam", "simsiam_no_stopgrad", "supervised", "random_init", "raw"]
    sg = simsiam_row(seed=0, quick=True, steps=3)
    no_sg = simsiam_row(seed=0, quick=True, steps=3, stop_gradient=False)
    assert sg["final_ssl_loss"] != no_sg["final_ssl_loss"] and 0 < sg["output_std"] < 1
    rand = baseline_row(seed=0, quick=True, steps=3, name="random_init")
    assert rand["params"] == 3 * 3 * (1 * 16 + 16 * 32 + 32 * 64 + 64 * 64) + 2 * (16 + 32 + 64 + 64)  # the backbone
    assert "pretrain_seconds" not in rand
    # the baseline encoder is SimSiam's backbone at initialisation, weight for weight
    x = torch.rand(5, 1, 8, 8)
    sim = _simsiam(3).eval()
    base = task.build_baseline("random_init", params=int(rand["params"]), seed=3, mode="digits").eval()
    assert torch.equal(base.encode(x), sim.encode(x))


def test_zoo_create():
    m = zoo.create("simsiam_cnn", **TINY)
    assert m.encode(torch.rand(2, 1, 8, 8)).shape == (2, 16)
    series = zoo.create("simsiam_cnn", input_kind="series", **TINY).train()  # ssl_probe's ucr / multiscale modes
    assert series.ssl_loss(torch.randn(5, 64), torch.randn(5, 64)).ndim == 0 and series.ssl_input == "series"
    with pytest.raises(ValueError, match="image"):
        zoo.create("simsiam_cnn", input_kind="video")
