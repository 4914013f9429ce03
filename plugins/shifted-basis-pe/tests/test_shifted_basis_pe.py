import math

import torch

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_shifted_basis_pe.model import ShiftedBasisEmbedding, ShiftedBasisMLP, distance_preservation, stable_rank
from zoo_shifted_basis_pe.reproduce import FOURIER, NON_FOURIER, REPRODUCTION, SWEEPS

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


def test_quick_reproduction_runs_both_sweeps_and_decides_on_their_best():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    sweep_rows = {f"{d}d {b} s={s:g}" for d in (1, 2) for b, sigmas in SWEEPS[d].items() for s in sigmas}
    best_rows = {f"{d}d {k} best" for d in (1, 2) for k in ("non-fourier", "fourier")}
    assert set(r.table) == sweep_rows | best_rows | {"2d siren", "2d relu-ff", "1d gaussian trade-off"}
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    for d in (1, 2):  # each "best" row is the maximum of its sweep's rows, seed by seed
        for kind, bases in (("non-fourier", NON_FOURIER), ("fourier", FOURIER)):
            rows = [r.per_seed[f"{d}d {b} s={s:g}"]["psnr_test"] for b in bases for s in SWEEPS[d][b]]
            assert r.per_seed[f"{d}d {kind} best"]["psnr_test"] == [max(v) for v in zip(*rows, strict=True)]
        assert r.per_seed[f"{d}d non-fourier best"]["psnr_test"] != r.per_seed[f"{d}d fourier best"]["psnr_test"]
    # narrow Gaussians: high stable rank, poor distance preservation; wide ones the opposite
    narrow, wide = r.table["1d gaussian s=0.003"], r.table["1d gaussian s=0.2"]
    assert narrow["stable_rank"] > 10 * wide["stable_rank"] and narrow["dist_pres"] < 0.5 < 0.95 < wide["dist_pres"]
    assert [c["check"] for c in r.checks] == ["1d gaussian trade-off spearman_rank_train >= 0.8",
                                              "1d gaussian trade-off interior_peak_db >= 1",
                                              "psnr_test: 1d non-fourier best - 1d fourier best >= -1",
                                              "psnr_test: 2d non-fourier best - 2d fourier best >= -1"]


def test_pretrained_tag_ships_a_pinned_snapshot_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["sbpe_triangle"][0].weights["camera"]
    assert (w.repo, w.recipe) == ("zoo-models/sbpe-triangle-camera", "zoo_shifted_basis_pe.train:camera")
    # the recipe's weights ship in the plugin, held to these sha256s; the Hub repo is not published (no commit)
    assert w.revision == "main" and w.snapshot is not None and set(w.files) == {"config.json", "model.safetensors"}
    assert callable(resolve_target(w.recipe))
