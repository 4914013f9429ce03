import math

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_gainer.editing import edit_locality
from zoo_gainer.model import GaINeR, HashGrid2D, knn
from zoo_gainer.reproduce import REPRODUCTION
from zoo_task_image_fit import image_fit as task

SMALL = {"n_gaussians": 16, "k": 4, "hash_levels": 2, "hidden": 8}


def test_conformance(hub):
    check_plugin("gainer", overrides={"gainer": SMALL})


def test_knn_matches_sorting():
    torch.manual_seed(0)
    q, p = torch.rand(20, 2), torch.rand(50, 2)
    want = torch.cdist(q, p).argsort(dim=1)[:, :7]
    assert torch.equal(knn(q, p, 7, chunk=6), want)


def test_aggregation_is_the_density_weighted_sum_of_the_k_nearest_features():
    torch.manual_seed(0)
    m = GaINeR(n_gaussians=9, k=3, embed_dim=4, hash_levels=0, hidden=8).eval()
    x = torch.tensor([[0.1, -0.2]])
    d = ((x - m.means) ** 2).sum(-1)
    near = d.argsort()[:3]
    var = m.log_var.exp()[near]
    w = torch.exp(-0.5 * (((x - m.means[near]) ** 2) / var).sum(-1))
    want = (w[:, None] * m.embed[near]).sum(0)
    assert torch.allclose(m.aggregate(x)[0], want, atol=1e-6)
    assert torch.allclose(m(x), torch.sigmoid(m.decoder(want[None])), atol=1e-6)


def test_initialisation_covers_the_image():
    torch.manual_seed(0)
    m = zoo.create("gainer")
    spacing = 2 / 32
    assert m.means.shape == (1024, 2) and float(m.means.detach().abs().max()) <= 1.0
    assert torch.allclose(m.log_var.detach().exp().sqrt(), torch.full((1024, 2), spacing))
    cells = ((m.means.detach() + 1) / spacing).floor().long()  # one Gaussian per grid cell
    assert len({tuple(c) for c in cells.tolist()}) == 1024
    assert m.hash.out_features == 16 and m.hash.res[0] == 8 and m.hash.res[-1] == 128


def test_hash_grid_interpolates_its_table():
    g = HashGrid2D(levels=1, features=2, log2_size=6, min_res=4, max_res=4)  # 5x5 = 25 vertices: dense
    with torch.no_grad():
        g.tables.copy_(torch.arange(64 * 2, dtype=torch.float32).reshape(1, 64, 2))
    vertex = torch.tensor([[-1.0, -0.5]])  # grid vertex (0, 1) -> dense index 0 * 5 + 1
    assert torch.allclose(g(vertex), torch.tensor([[2.0, 3.0]]))
    mid = torch.tensor([[-0.75, -0.75]])  # the middle of the cell (0,0)-(1,1)
    want = (g.tables[0, 0] + g.tables[0, 1] + g.tables[0, 5] + g.tables[0, 6]) / 4
    assert torch.allclose(g(mid)[0], want)
    hashed = HashGrid2D(levels=1, features=2, log2_size=4, min_res=32, max_res=32)
    assert hashed(torch.rand(100, 2) * 2 - 1).shape == (100, 2)


def test_bake_keeps_the_image_and_edit_moves_only_nearby_pixels():
    s = task.make_signal("camera", 16)
    torch.manual_seed(0)
    m = zoo.create("gainer", n_gaussians=64, k=8, hash_levels=2, hidden=16)
    before_bake = task.predict(m, s.coords)
    m.bake()
    assert bool(m.baked) and torch.allclose(task.predict(m, s.coords), before_bake, atol=1e-6)
    with torch.no_grad():
        m.embed[5] = 3.0  # make Gaussian 5 visible in the (untrained) rendering
    feat = m.gaussian_features()[5].clone()
    out = edit_locality(m, task.coord_grid(64, 64), torch.tensor([5]), torch.tensor([0.1, 0.0]))
    assert torch.equal(m.gaussian_features()[5], feat)  # features travel with the Gaussian (and undo restored it)
    assert 0 < out["frac_changed"] < 0.2 and out["frac_in_support"] == 1.0
    # far from the moved Gaussian nothing changes at all
    grid = task.coord_grid(64, 64)
    ref = task.predict(m, grid)
    old = m.means[5].detach().clone()
    m.edit([5], (old + torch.tensor([0.1, 0.0]))[None])
    far = ((grid - old).norm(dim=-1) > 0.8)
    assert torch.equal(task.predict(m, grid)[far], ref[far])


def test_fit_bakes_and_refuses_to_refit():
    s = task.make_signal("camera", 8)
    m = zoo.create("gainer", **SMALL)
    fig = task.fit(m, s, steps=3)
    assert len(fig["losses"]) == 3 and bool(m.baked)
    with pytest.raises(RuntimeError, match="baked"):
        m.fit(s, steps=1)


def test_quick_reproduction_edits_gainer_and_both_baselines():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert set(r.table) == {"gainer", "siren", "relu-ff"} and r.seeds == [0, 1]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    assert "frac_support" in r.table["gainer"] and "bias_shift" in r.table["siren"]
    p = r.table["gainer"]["params"]
    assert all(abs(r.table[b]["params"] - p) / p < 0.1 for b in ("siren", "relu-ff"))
    # the baselines' edits are sized to GaINeR's largest change (or as large as one unit can make it)
    for b in ("siren", "relu-ff"):
        assert all(m <= g + 1e-6 for m, g in zip(r.per_seed[b]["max_change"], r.per_seed["gainer"]["max_change"],
                                                 strict=True))
    # moving Gaussians and shifting a unit's bias change different parts of the image
    assert r.per_seed["gainer"]["frac_changed"] != r.per_seed["siren"]["frac_changed"]
    assert [c["check"] for c in r.checks] == ["gainer psnr_train >= 25", "gainer frac_in_support >= 0.99",
                                              "frac_changed: siren - gainer >= 6.10352e-05",
                                              "frac_changed: relu-ff - gainer >= 6.10352e-05"]
