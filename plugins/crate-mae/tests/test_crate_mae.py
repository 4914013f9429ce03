"""crate-mae plugin: the conformance kit and what tells CRATE layers from ViT blocks."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_crate_mae.model import (
    CPU,
    ISTA,
    MSSA,
    PAPER,
    CrateDecoderLayer,
    CrateEncoderLayer,
    MaskedAutoencoder,
    crate_mae,
    mae_vit,
    param_count,
)

TINY = {"dim": 16, "depth": 1, "decoder_depth": 1, "heads": 2}
TINY28 = {**TINY, "img_size": 28, "patch": 7}  # the task's example input is Fashion-MNIST


def test_conformance(hub):
    check_plugin("crate-mae", overrides={"crate_mae": TINY28, "mae_vit": TINY28})


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("cfg", [CPU, {**CPU, "dim": 48, "depth": 3, "decoder_depth": 2, "patch": 4, "in_chans": 3}])
def test_param_count_closed_form_and_ratio(cfg, tied):
    crate = MaskedAutoencoder(kind="crate", tied_output=tied, **{k: v for k, v in cfg.items()})
    vit = MaskedAutoencoder(kind="vit", **cfg)
    assert count_params(crate) == param_count("crate", tied_output=tied, **cfg)
    assert count_params(vit) == param_count("vit", **cfg)
    # per layer 3 d^2 + 5 d (2 d^2 + 4 d tied) against 12 d^2 + 13 d: at the paper's base size the ratio is 25.5%
    # for identical depths and 30.6% against the official ViT-MAE-Base (8 decoder layers): "about 30%"
    base = PAPER["base"]
    assert param_count("crate", **base) == 43_745_280
    assert abs(param_count("crate", **base) / param_count("vit", **{**base, "decoder_depth": 8}) - 0.306) < 1e-3
    ratio = count_params(crate) / count_params(vit)
    assert (0.1 < ratio < 0.25) if tied else (0.2 < ratio < 0.35)


def test_mssa_one_matrix_is_query_key_and_value():
    torch.manual_seed(0)
    att = MSSA(dim=8, heads=2).eval()
    assert [n for n, _ in att.named_parameters()] == ["U.weight", "out.weight", "out.bias"]
    z = torch.randn(3, 5, 8)
    # closed form per head: w = U_k^T z, y = softmax(w w^T / sqrt(p)) w
    w = (z @ att.U.weight.t()).reshape(3, 5, 2, 4).transpose(1, 2)
    y = torch.softmax(w @ w.transpose(-1, -2) / 2.0, -1) @ w
    assert torch.allclose(att(z), att.out(y.transpose(1, 2).reshape(3, 5, 8)), atol=1e-6)
    # the attention matrix is symmetric before the softmax (Q = K): a ViT with separate Q and K is not
    scores = w @ w.transpose(-1, -2)
    assert torch.allclose(scores, scores.transpose(-1, -2))
    # swap test: a ViT block's attention has three separate projections (3 d^2 weights) where MSSA has one (d^2)
    vit = mae_vit(**TINY)
    crate = crate_mae(**TINY)
    assert vit.blocks[0].attn.qkv.weight.shape == (48, 16) and crate.blocks[0].mssa.U.weight.shape == (16, 16)
    tied = MSSA(dim=8, heads=2, tied_output=True)
    assert [n for n, _ in tied.named_parameters()] == ["U.weight"]  # the paper's [U_1 .. U_K] output


def test_ista_step_closed_form_non_negative_and_sparse():
    torch.manual_seed(0)
    ista = ISTA(dim=16, eta=0.1, lam=0.5)
    x = torch.randn(4, 10, 16)
    D = ista.D.detach()
    expect = torch.relu(x + 0.1 * (x - x @ D.t()) @ D - 0.1 * 0.5)
    out = ista(x)
    assert torch.allclose(out, expect, atol=1e-6)
    assert (out >= 0).all() and (out == 0).float().mean() > 0.3  # a sparse, non-negative code
    # with D = 0 the step is a soft threshold: ReLU(x - eta lambda)
    with torch.no_grad():
        ista.D.zero_()
    assert torch.allclose(ista(x), torch.relu(x - 0.05))
    # every CRATE encoder layer ends in ISTA: its tokens are non-negative (a ViT block's are not)
    enc = crate_mae(**TINY).eval()
    assert (enc.blocks[0](torch.randn(2, 17, 16)) >= 0).all()
    assert (mae_vit(**TINY).blocks[0](torch.randn(2, 17, 16)) < 0).any()


def test_decoder_layer_reverses_the_encoder_steps():
    torch.manual_seed(0)
    dec = CrateDecoderLayer(dim=8, heads=2)
    enc = CrateEncoderLayer(dim=8, heads=2, eta=0.1, lam=0.5)
    assert set(dict(dec.named_parameters())) == {"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "D",
                                                 "mssa.U.weight", "mssa.out.weight", "mssa.out.bias"}
    assert count_params(dec) == count_params(enc)  # the same pieces, in reverse order
    y = torch.randn(2, 5, 8)
    lin = torch.nn.functional.layer_norm(y, (8,)) @ dec.D.detach().t()  # first undo the code: D_dec LN(y)
    assert torch.allclose(dec(y), lin - dec.mssa(dec.norm2(lin)), atol=1e-6)  # then the opposite MSSA step
    # with the attention output zeroed, the decoder layer is exactly linear in LN(y): no ReLU, no threshold
    with torch.no_grad():
        dec.mssa.out.weight.zero_()
        dec.mssa.out.bias.zero_()
    assert torch.allclose(dec(y), lin, atol=1e-6)
    net = crate_mae(**{**TINY, "depth": 3, "decoder_depth": 3})
    assert all(isinstance(b, CrateEncoderLayer) for b in net.blocks)
    assert all(isinstance(b, CrateDecoderLayer) for b in net.decoder_blocks)


def test_masking_loss_and_reconstruction():
    torch.manual_seed(0)
    net = crate_mae(**TINY)
    x = torch.rand(6, 1, 8, 8)
    assert torch.equal(net.unpatchify(net.patchify(x)), x)
    mask = net.random_mask(6)
    assert mask.shape == (6, 16) and (mask.sum(1) == 12).all()  # 75% of 16 patches
    # the loss ignores the visible patches: changing them changes only the encoder input, never the target error
    with torch.no_grad():
        pred = net.decode_tokens(net.encode_tokens(x, mask))
        err = ((pred - net.patchify(x)) ** 2).mean(-1)
        assert torch.allclose(net.masked_loss(x, mask), err[mask].mean())
        rec = net.reconstruct(x, mask)
        vis = net.patchify(rec)[~mask]
        assert torch.equal(vis, net.patchify(x)[~mask])  # visible patches kept
        assert torch.equal(net.reconstruct(x), net.reconstruct(x))  # default mask is seeded
    # masked patches enter as the mask token: their pixels cannot reach the encoder
    y = x.clone()
    y[net.unpatchify(mask[..., None].expand(-1, -1, 4).float()) > 0] = 0.5
    with torch.no_grad():
        assert torch.allclose(net.encode_tokens(x, mask), net.encode_tokens(y, mask), atol=1e-6)


def test_a_short_fit_lowers_the_masked_error():
    torch.manual_seed(0)
    net = crate_mae(**TINY)
    x = torch.rand(32, 1, 8, 8) * torch.linspace(0, 1, 8)  # a smooth ramp: masked patches predictable from the rest
    mask = net.random_mask(32, torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = float(net.masked_loss(x, mask))
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
    for _ in range(30):
        opt.zero_grad()
        net.ssl_loss(x).backward()
        opt.step()
    with torch.no_grad():
        assert float(net.masked_loss(x, mask)) < 0.5 * before


def test_presets_and_errors():
    net = crate_mae(preset="tiny", img_size=32, depth=1, decoder_depth=1)
    assert net.dim == 384 and net.patch == 16 and net.in_chans == 3
    with pytest.raises(ValueError, match="preset"):
        crate_mae(preset="huge")
    with pytest.raises(ValueError, match="unknown option"):
        crate_mae(width=3)
    with pytest.raises(ValueError, match="kind"):
        MaskedAutoencoder(kind="mlp")
    with pytest.raises(ValueError, match="pool"):
        crate_mae(pool="max")
    with pytest.raises(ValueError, match="multiple"):
        crate_mae(patch=3)
    with pytest.raises(ValueError, match="expected images"):
        crate_mae(**TINY).encode(torch.rand(2, 1, 28, 28))


def test_registered():
    assert isinstance(zoo.create("crate_mae", **TINY), MaskedAutoencoder)
    assert zoo.create("mae_vit", **TINY).kind == "vit"


def test_pretrained_fashion_mnist_tag_reconstructs_better_than_its_untrained_twin():
    from zoo_task_ssl_probe import data

    tag = zoo.create("crate_mae.fashion_mnist", pretrained=True)
    assert tag.zoo.pretrained and (tag.img_size, tag.patch) == (28, 4)
    untrained = zoo.create("crate_mae", img_size=28, patch=4)
    x = data.fashion_mnist().x_test[:256]
    g = torch.Generator().manual_seed(0)
    mask = tag.random_mask(len(x), generator=g)
    with torch.no_grad():
        err = {name: float(m.masked_loss(x, mask)) for name, m in (("tag", tag), ("untrained", untrained))}
        feats = tag.encode(x)
    assert err["tag"] < 0.5 * err["untrained"], err
    assert feats.shape == (256, tag.dim) and torch.isfinite(feats).all()
