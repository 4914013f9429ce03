"""FUNCATTN plugin: the conformance kit, and the properties that tell functional attention from softmax attention."""
from __future__ import annotations

import math

import pytest
import torch

from zoo.testing import check_plugin
from zoo_funcattn.model import CPU, PAPER, FunctionalAttention, funcattn, quadrature_weights

TINY = {"width": 8, "heads": 2, "n_bases": 4, "blocks": 1, "mlp_ratio": 1}


def test_conformance(hub):
    check_plugin("funcattn", overrides={"funcattn": TINY})


def test_presets_and_contract():
    assert len(funcattn().blocks) == CPU["blocks"] and funcattn(preset="paper").blocks[0].attn.n_bases == PAPER["n_bases"]
    with pytest.raises(ValueError, match="preset"):
        funcattn(preset="huge")
    with pytest.raises(ValueError, match="multiple of heads"):
        funcattn(width=30, heads=4)
    net = funcattn(**TINY)
    for n in (17, 64, 256):  # any number of points
        x = torch.rand(2, n, 1)
        assert net(torch.sin(6 * x), x).shape == (2, n, 1)


def test_quadrature_weights_follow_the_spacing():
    x = torch.tensor([[[0.0], [0.1], [0.2], [1.0]]])
    w = quadrature_weights(x)[0]
    assert torch.allclose(w, torch.tensor([0.05, 0.1, 0.45, 0.4]))
    assert torch.allclose(quadrature_weights(torch.rand(3, 5, 2)), torch.full((3, 5), 0.2))  # d > 1: equal weights


def test_permutation_equivariance_over_points():
    torch.manual_seed(0)
    net = funcattn(width=16, heads=2, n_bases=8, blocks=2).eval()
    x = torch.rand(2, 50, 1)
    v = torch.sin(2 * math.pi * x) + x ** 2
    perm = torch.randperm(50)
    with torch.no_grad():
        out, out_perm = net(v, x), net(v[:, perm], x[:, perm])
    assert torch.allclose(out[:, perm], out_perm, atol=1e-5)


def _f(x):
    return torch.sin(2 * math.pi * x) + 0.5 * torch.cos(6 * math.pi * x)


def _features(x, seed=0):
    # fixed random features of (x, f(x)): a lifted field that is the same function at every sampling
    w = torch.randn(2, 32, generator=torch.Generator().manual_seed(seed)) * 3
    return torch.sin(torch.cat([x, _f(x)], -1) @ w)


def _grids():
    coarse = (torch.arange(64) / 64).reshape(1, 64, 1)
    refined = torch.cat([coarse, (torch.arange(64) / 128 + 1 / 256).reshape(1, 64, 1)], 1)  # 64 extra points in [0, 0.5)
    return coarse, refined


def _change(fn):
    coarse, refined = _grids()
    with torch.no_grad():
        a, b = fn(coarse), fn(refined)[:, :64]
    return ((a - b).norm() / a.norm()).item()


@pytest.mark.parametrize("seed", [0, 1])
def test_discretisation_consistency_where_softmax_attention_has_none(seed):
    # the same function on 64 uniform points and on those plus 64 more crowded into [0, 0.5): the functional
    # attention layer's output at the shared points barely moves (quadrature-weighted projections are Riemann sums
    # of the same integrals); softmax attention (a stock nn.MultiheadAttention, no quadrature weights) and the same
    # layer with equal point weights both shift toward the crowded half
    torch.manual_seed(seed)
    layer = FunctionalAttention(32, heads=4, n_bases=16)
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    ours = _change(lambda x: layer(_features(x), quadrature_weights(x)))
    equal = _change(lambda x: layer(_features(x), torch.full(x.shape[:2], 1 / x.shape[1])))
    softmax = _change(lambda x: mha(_features(x), _features(x), _features(x))[0])
    assert ours < 0.02 and equal > 0.1 and softmax > 0.1


def test_functional_map_is_k_by_k_and_the_point_mixing_has_rank_k():
    torch.manual_seed(0)
    layer = FunctionalAttention(32, heads=4, n_bases=8).double()  # float64: a numerical rank without float32 noise
    mha = torch.nn.MultiheadAttention(32, 4, batch_first=True).double()
    for n in (64, 128):
        x = (torch.arange(n, dtype=torch.float64) / n).reshape(1, n, 1)
        z, quad = _features(x.float()).double(), quadrature_weights(x)
        with torch.no_grad():
            coef, phi = layer.project(z, quad)
            c, _ = layer.functional_map(coef)
            mixing = layer.mixing_matrix(z, quad)
            _, attn = mha(z, z, z, need_weights=True, average_attn_weights=False)
        assert coef.shape == (1, 4, 8, 8) and c.shape == (1, 4, 8, 8)  # K tokens whatever N is
        assert phi.shape == (1, 4, n, 8) and torch.allclose(phi.sum(-1), torch.ones(1, 4, n, dtype=torch.float64))
        assert mixing.shape == (1, 4, n, n) and int(torch.linalg.matrix_rank(mixing).max()) <= 8
        assert int(torch.linalg.matrix_rank(attn).min()) > 8  # softmax affinities: rank ~ N


def test_mixing_matrix_is_what_the_layer_applies():
    # out = to_out(phi C P^T F W_v): the mixing matrix reproduces the layer's output from the value features
    torch.manual_seed(0)
    layer = FunctionalAttention(16, heads=2, n_bases=4)
    x = torch.rand(1, 40, 1)
    z, quad = _features(x)[..., :16], quadrature_weights(x)
    with torch.no_grad():
        m = layer.mixing_matrix(z, quad)
        f = layer._split(layer.to_values(z))
        heads = m @ layer.to_v(f)
        want = layer.out(heads.transpose(1, 2).reshape(1, 40, 16))
        assert torch.allclose(layer(z, quad), want, atol=1e-5)


def test_whole_model_is_discretisation_consistent_only_with_quadrature_weights():
    # the full operator at init (3 blocks): the crowded refinement leaves its output at the shared points unchanged
    # with quadrature weights; with the authors' equal point weights it moves by several percent
    coarse, refined = _grids()
    for seed in (0, 1):
        changes = {}
        for quadrature in (True, False):
            torch.manual_seed(seed)
            net = funcattn(quadrature=quadrature).eval()
            with torch.no_grad():
                a, b = net(_f(coarse), coarse), net(_f(refined), refined)[:, :64]
            changes[quadrature] = ((a - b).norm() / a.norm()).item()
        assert changes[True] < 0.005 and changes[False] > 0.03
