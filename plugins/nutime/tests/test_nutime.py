"""nutime plugin: the conformance kit and what tells the multi-scaled embedding from a linear one."""
from __future__ import annotations

import copy

import pytest
import torch

import zoo
from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_nutime.model import NME, PAPER, LinearScalarEmbedding, NuTime, nutime, window_tokens

TINY = {"dim": 16, "depth": 1, "heads": 2, "mlp_dim": 32, "proj_hidden": 32, "proj_dim": 8}
XS = torch.logspace(-4, 4, 33)  # eight decades, four points each


def test_conformance(hub):
    check_plugin("nutime", overrides={"nutime": TINY})


def test_window_tokens_reconstruct_the_series_exactly():
    torch.manual_seed(0)
    x = torch.randn(3, 2, 64, dtype=torch.float64) * torch.tensor([1e-3, 1e3], dtype=torch.float64)[:, None] + 5.0
    shape, mean, std = window_tokens(x, 16)
    assert shape.shape == (3, 2, 4, 16) and mean.shape == std.shape == (3, 2, 4)
    back = shape * (std[..., None] + 1e-8) + mean[..., None]
    assert torch.allclose(back.reshape(3, 2, 64), x, rtol=0, atol=1e-12)
    # the shape is scale- and offset-free: the same window at another scale gives the same shape
    s2, m2, sd2 = window_tokens(1e3 * x - 7.0, 16)
    assert torch.allclose(s2, shape, atol=1e-4) and torch.allclose(sd2, 1e3 * std)
    assert torch.allclose(shape.mean(-1), torch.zeros(3, 2, 4, dtype=torch.float64), atol=1e-9)
    with pytest.raises(ValueError, match="multiple of 16"):
        window_tokens(x[..., :60], 16)


def test_nme_is_well_conditioned_across_eight_decades_where_linear_is_not():
    torch.manual_seed(0)
    nme, lin = NME(16, num_scales=9), LinearScalarEmbedding(16)
    with torch.no_grad():
        e = nme(XS)
        norms = e.norm(dim=-1)
        assert norms.max() <= 4.0 + 1e-4 and norms.min() > 1.0  # a convex mix of unit-variance vectors: <= sqrt(16)
        # a 50% change of x moves the embedding by a comparable amount at every scale from 1e-4 to 1e4
        moved = (nme(1.5 * XS) - e).norm(dim=-1)
        assert moved.min() > 0.3 and moved.max() / moved.min() < 10
        assert (nme(-XS) - e).norm(dim=-1).min() > 1.0  # the sign is kept
        ln = lin(XS)
        lmoved = (lin(1.5 * XS) - ln).norm(dim=-1)
    assert lmoved.max() / lmoved.min() > 1e7  # the linear embedding: eight orders of magnitude apart
    # at a power of the base only that scale's term is left: e(10^k) = LN(w_k + b_k)
    one = torch.nn.functional.layer_norm(nme.w[4] + nme.b[4], (16,))
    assert torch.allclose(nme(torch.tensor(1.0)), one, atol=1e-4)
    w = nme.weights(torch.tensor([3e-4, 2.0, 5e3]))
    assert torch.allclose(w.sum(-1), torch.ones(3)) and w.argmax(-1).tolist() == [0, 4, 8]


def test_scales_and_presets():
    assert NME(8, num_scales=5).scales.tolist() == pytest.approx([1e-2, 1e-1, 1.0, 1e1, 1e2])
    assert NME(8, num_scales=9).scales.tolist() == pytest.approx([10.0 ** k for k in range(-4, 5)])
    net = nutime(preset="paper", depth=1, proj_hidden=64)
    assert net.encoder.scalar.scales.numel() == PAPER["num_scales"] == 5 and net.dim == 128
    with pytest.raises(ValueError, match="preset"):
        nutime(preset="huge")
    with pytest.raises(ValueError, match="unknown option"):
        nutime(width=3)
    with pytest.raises(ValueError, match="scalar_embed"):
        nutime(scalar_embed="log")
    with pytest.raises(ValueError, match="expected series"):
        nutime(**TINY).encode(torch.randn(2, 3, 64))


def test_linear_flag_swaps_only_the_scalar_embedding():
    a, b = nutime(**TINY), nutime(**TINY, scalar_embed="linear")
    assert isinstance(a.encoder.scalar, NME) and isinstance(b.encoder.scalar, LinearScalarEmbedding)
    rest = lambda m: {k: v.shape for k, v in m.encoder.state_dict().items() if not k.startswith("scalar")}  # noqa
    assert rest(a) == rest(b)
    # the series' scale reaches the tokens only through the embedded mean/std: NME tokens stay O(1) at 1e3,
    # the linear ones' pre-norm activations grow with it
    x = torch.randn(4, 64)
    with torch.no_grad():
        ta, tb = a.encoder.tokens(1e3 * x + 1e3), b.encoder.tokens(1e3 * x + 1e3)
    assert torch.isfinite(ta).all() and torch.isfinite(tb).all()
    assert b.encoder.scalar(torch.tensor(1e3)).abs().max() > 10 * a.encoder.scalar(torch.tensor(1e3)).abs().max()


def test_byol_target_moves_by_ema_and_is_not_a_parameter():
    torch.manual_seed(0)
    net = nutime(**TINY, ema=0.9)
    assert count_params(net) == count_params(net.encoder) + count_params(net.projector) + count_params(net.predictor)
    before = copy.deepcopy(net.target.state_dict())
    with torch.no_grad():
        for p in net.encoder.parameters():
            p.add_(1.0)
    x = torch.randn(8, 64)
    net.train()
    loss = net.ssl_loss(x, x + 0.1)
    loss.backward()
    assert all(p.grad is None for p in net.target.parameters())  # no gradient to the target
    k = "encoder.shape_embed.bias"
    online = net.encoder.state_dict()["shape_embed.bias"]
    assert torch.allclose(net.target.state_dict()[k], 0.9 * before[k] + 0.1 * online, atol=1e-6)
    net.eval()
    still = copy.deepcopy(net.target.state_dict())
    net.ssl_loss(x, x)
    assert all(torch.equal(v, net.target.state_dict()[k]) for k, v in still.items())  # eval: no EMA step
    assert 0 <= loss.item() <= 4  # two MSEs of unit vectors


def test_any_length_and_channels():
    net = nutime(**TINY, in_chans=3).eval()
    assert net.encode(torch.randn(2, 3, 100)).shape == (2, 16)  # 100 -> resized to 112
    assert nutime(**TINY).encode(torch.randn(2, 24)).shape == (2, 16)


def test_registered():
    assert isinstance(zoo.create("nutime", **TINY), NuTime)
    assert NuTime.ssl_input == "series"


def test_pretrained_multiscale_tag_is_probed_without_retraining_and_beats_raw_values():
    from zoo_task_ssl_probe import task

    tag = zoo.create("nutime.multiscale", pretrained=True)
    before = {k: v.clone() for k, v in tag.state_dict().items()}
    r = task.evaluate(tag, mode="multiscale", steps=5, seed=0, baselines=["raw"], init_probe=False)
    assert all(torch.equal(before[k], v) for k, v in tag.state_dict().items())
    assert "pretrain_steps" not in r.metrics or r.metrics["pretrain_steps"] == 0
    assert r.metrics["linear_probe_acc"] > r.baselines["raw"]["linear_probe_acc"] + 0.2
