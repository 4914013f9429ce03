import math

import torch

from zoo.testing import check_plugin
from zoo_shifted_basis_pe.model import ShiftedBasisEmbedding, ShiftedBasisMLP, distance_preservation, stable_rank
from zoo_shifted_basis_pe.reproduce import reproduce

SMALL = {"n_centers": 8, "hidden": 8}


def test_conformance(hub):
    check_plugin("shifted-basis-pe", overrides={n: SMALL for n in ("sbpe_gaussian", "sbpe_triangle", "sbpe_rff")})


def test_gaussian_and_triangle_are_shifted_copies_of_one_function():
    e = ShiftedBasisEmbedding(in_features=1, n_centers=4, sigma=0.5, basis="gaussian")
    assert torch.allclose(e.centers, torch.tensor([-0.75, -0.25, 0.25, 0.75]))
    x = torch.tensor([[0.1]])
    raw = torch.exp(-0.5 * ((0.1 - e.centers) / 0.5) ** 2)
    assert torch.allclose(e(x)[0], raw * e.scale[0], atol=1e-6)
    # shifting x by one centre spacing shifts the embedding by one slot
    a, b = e(torch.tensor([[-0.25]]))[0], e(torch.tensor([[0.25]]))[0]
    assert torch.allclose(a[:3], b[1:], atol=1e-6)
    t = ShiftedBasisEmbedding(in_features=1, n_centers=4, sigma=0.5, basis="triangle")
    assert torch.allclose(t(torch.tensor([[0.75]]))[0] / t.scale[0], torch.tensor([0.0, 0.0, 0.0, 1.0]))


def test_2d_embedding_is_separable_and_normalised():
    e = ShiftedBasisEmbedding(in_features=2, n_centers=16, sigma=0.1)
    x = torch.rand(50, 2) * 2 - 1
    out = e(x)
    assert out.shape == (50, 32)
    ex = ShiftedBasisEmbedding(in_features=1, n_centers=16, sigma=0.1)
    assert torch.allclose(out[:, :16] * math.sqrt(2), ex(x[:, :1]), atol=1e-6)
    assert float(out.norm(dim=1).max()) <= 1.0 + 1e-5


def test_fourier_features_are_shifted_sinusoids():
    # cos(2 pi f (x - t)) lies in the span of [cos(2 pi f x), sin(2 pi f x)] for every shift t
    e = ShiftedBasisEmbedding(in_features=1, n_centers=8, sigma=3.0, basis="rff")
    x = torch.linspace(-1, 1, 40, dtype=torch.float32).unsqueeze(1)
    feats = e(x).double()
    f = e.freqs[0, 2].double()
    shifted = torch.cos(2 * math.pi * f * (x[:, 0].double() - 0.37))
    coef = torch.linalg.lstsq(feats, shifted.unsqueeze(1)).solution
    assert float((feats @ coef - shifted.unsqueeze(1)).abs().max()) < 1e-4


def test_stable_rank_and_distance_preservation_trade_off():
    assert stable_rank(torch.eye(5)) == 5.0
    assert abs(stable_rank(torch.ones(6, 3)) - 1.0) < 1e-9
    x = ((torch.arange(64) * 2 + 1) / 64 - 1).unsqueeze(1)  # on the centres
    narrow, wide = ShiftedBasisEmbedding(1, 64, 0.002), ShiftedBasisEmbedding(1, 64, 0.2)
    assert stable_rank(narrow(x)) > 10 * stable_rank(wide(x))
    assert distance_preservation(wide(x), x) > 0.95 > 0.5 > distance_preservation(narrow(x), x)


def test_linear_model_option_and_default_lr():
    m = ShiftedBasisMLP(basis="gaussian", n_centers=8, sigma=0.2, layers=0)
    assert len(m.body) == 0 and m.head.in_features == 16 and m.default_lr == 1e-3


def test_quick_reproduction_is_well_formed():
    r = reproduce(quick=True)
    assert isinstance(r.passed, bool) and r.settings["quick"]
    assert {"2d siren", "2d relu-ff"} <= set(r.table)
    assert all("stable_rank" in v for k, v in r.table.items() if k.startswith("1d"))


def test_pretrained_tag_is_unpinned_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["sbpe_triangle"][0].weights["camera"]
    assert (w.repo, w.recipe) == ("zoo-models/sbpe-triangle-camera", "zoo_shifted_basis_pe.train:camera")
    assert w.revision == "main" and not w.files  # unpinned: no weights pushed to a public Hub yet
    assert callable(resolve_target(w.recipe))
