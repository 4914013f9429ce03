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


def test_latent_is_the_authors_batch_mean_gradient_at_origin():
    # the authors' inner loss: squared error summed over pixels, averaged over the batch (of batch_size)
    torch.manual_seed(0)
    m = ImplicitGON(**TINY, batch_size=3)
    x = torch.rand(3, 16, 1)
    coords = coord_grid(4, 4)
    z0 = torch.zeros(3, 4, requires_grad=True)
    (g,) = torch.autograd.grad(((m.decode(z0, coords) - x) ** 2).sum(1).mean(), z0)
    assert torch.allclose(m.encode(x, coords), -g, atol=1e-7)


def test_latent_scale_is_one_over_batch_of_the_per_datum_gradient_and_batch_independent():
    torch.manual_seed(0)
    m = ImplicitGON(**TINY)  # batch_size 64
    x = torch.rand(5, 16, 1)
    coords = coord_grid(4, 4)
    z = m.encode(x, coords)
    for i in range(5):  # the old (summed) reduction gave z_i = -grad of datum i's own loss: 64x larger
        z0 = torch.zeros(1, 4, requires_grad=True)
        (g,) = torch.autograd.grad(((m.decode(z0, coords) - x[i:i + 1]) ** 2).sum(), z0)
        assert torch.allclose(z[i], -g[0] / 64, atol=1e-7)
        assert not torch.allclose(z[i], -g[0], rtol=0.5)
    # a datum's latent does not depend on the batch it is encoded in (evaluation batches differ in size)
    assert torch.allclose(m.encode(x[:2], coords), z[:2], atol=1e-7)
    # observed-pixel encoding (in-painting): the same rule over the kept pixels only
    mask = torch.zeros(5, 16, dtype=torch.bool)
    mask[:, :8] = True
    assert torch.allclose(m.encode(x, coords, mask=mask), m.encode(x[:, :8], coords[:8]), atol=1e-7)


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


def test_pretrained_tag_ships_a_pinned_snapshot_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["gon_implicit"][0].weights["digits"]
    assert (w.repo, w.recipe) == ("zoo-models/gon-implicit-digits", "zoo_gon.train:digits")
    # the recipe's weights ship in the plugin, held to these sha256s; the Hub repo is not published (no commit)
    assert w.revision == "main" and w.snapshot is not None and set(w.files) == {"config.json", "model.safetensors"}
    assert callable(resolve_target(w.recipe))
