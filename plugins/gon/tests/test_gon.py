import math

import torch

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_gon.model import ImplicitGON
from zoo_gon.reproduce import REPRODUCTION
from zoo_task_image_fit.signal_set import coord_grid

TINY = {"hidden": 8, "layers": 2, "latent_dim": 4}


def test_conformance(hub):
    check_plugin("gon", overrides={"gon_implicit": TINY})


def test_latent_is_negative_gradient_at_origin_per_datum():
    torch.manual_seed(0)
    m = ImplicitGON(**TINY)
    x = torch.rand(3, 16, 1)
    coords = coord_grid(4, 4)
    z = m.encode(x, coords)
    for i in range(3):  # each datum alone: z_i = -d/dz0 sum_pixels (F(c, z0) - x_i)^2 at z0 = 0
        z0 = torch.zeros(1, 4, requires_grad=True)
        loss = ((m.decode(z0, coords) - x[i:i + 1]) ** 2).sum()
        (g,) = torch.autograd.grad(loss, z0)
        assert torch.allclose(z[i], -g[0], atol=1e-6)


def test_siren_input_is_coords_and_latent():
    m = ImplicitGON(**TINY)
    assert m.net.body[0].linear.in_features == 2 + 4
    assert m.net.body[0].w0 == 30.0


def test_training_is_second_order():
    torch.manual_seed(0)
    m = ImplicitGON(**TINY)
    x = torch.rand(2, 4, 4, 1)
    full = torch.autograd.grad(m.training_loss(x), list(m.parameters()))
    # the same loss with the latent treated as a constant (first order only) has different gradients
    coords = coord_grid(4, 4)
    z = m.encode(x.reshape(2, 16, 1), coords).detach()
    first = torch.autograd.grad(m.loss(m.decode(z, coords), x.reshape(2, 16, 1)).mean(), list(m.parameters()))
    assert any(not torch.allclose(a, b) for a, b in zip(full, first, strict=True))


def test_quick_reproduction_measures_gon_against_its_baselines():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert set(r.table) == {"gon_implicit", "ae-2x", "ae"} and r.seeds == [0, 1]
    p = r.table["gon_implicit"]["params"]
    assert abs(r.table["ae-2x"]["params"] - 2 * p) / (2 * p) < 0.15  # the baseline really is 2x GON
    # two seeds give a finite interval, and the rows are different models trained on the same data
    assert all(math.isfinite(v) for v in r.rows["gon_implicit"]["mse_test"]["ci95"])
    assert r.per_seed["gon_implicit"]["mse_test"] != r.per_seed["ae-2x"]["mse_test"]
    assert [c["check"] for c in r.checks] == ["mse_test: ae-2x - gon_implicit >= 0", "train_mse_auc: ae-2x - gon_implicit >= 0"]
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive")


def test_pretrained_tag_is_unpinned_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["gon_implicit"][0].weights["digits"]
    assert (w.repo, w.recipe) == ("zoo-models/gon-implicit-digits", "zoo_gon.train:digits")
    assert w.revision == "main" and not w.files  # unpinned: no weights pushed to a public Hub yet
    assert callable(resolve_target(w.recipe))
