"""tabular-num-embed: the conformance kit, PLE's Eq. 1 (exact reconstruction, bins fitted on train, tree bins that
find a step), the periodic embedding's Eq. 2, and a short fit where the embeddings beat the plain MLP."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from zoo.testing import check_plugin
from zoo_tabular_num_embed.model import (
    PAPER,
    NumEmbedMLP,
    PeriodicEmbeddings,
    PiecewiseLinearEncoding,
    mlp_ple,
    mlp_plr,
    tree_edges,
)

TINY_PLR = {"n_frequencies": 2, "d_embedding": 4, "width": 8}
TINY_PLE = {"n_bins": 4, "width": 8}


def test_conformance(hub):
    check_plugin("tabular-num-embed", overrides={"mlp_plr": TINY_PLR, "mlp_ple": TINY_PLE})


def test_ple_is_eq1_and_reconstructs_x():
    ple = PiecewiseLinearEncoding(1, 4)
    edges = np.array([0.0, 1.0, 3.0, 4.0, 8.0])
    ple.set_edges([edges])
    x = torch.tensor([[-1.0], [0.5], [2.0], [5.0], [10.0]])
    e = ple(x)[:, 0]
    assert torch.allclose(e[1], torch.tensor([0.5, 0.0, 0.0, 0.0]))  # inside bin 1
    assert torch.allclose(e[2], torch.tensor([1.0, 0.5, 0.0, 0.0]))  # bins before are full, after empty
    assert e[0, 0] == -1.0 and e[4, 3] == 1.5  # the first bin extrapolates below, the last above
    # the encoding is a coordinate system: b_0 + sum_t e_t (b_t - b_{t-1}) = x for every x (a plain MLP input is not)
    widths = torch.tensor(np.diff(edges), dtype=torch.float32)
    assert torch.allclose(edges[0] + (e * widths).sum(1), x[:, 0])


def test_prepare_fits_quantile_bins_on_the_training_data():
    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.randn(500, 1, generator=g), (torch.rand(500, 1, generator=g) > 0.5).float()], 1)
    net = mlp_ple(n_num=2, n_bins=8, width=8)
    net.prepare(x, torch.zeros(500))
    assert net.num.n_active.tolist() == [8, 1]  # a binary feature has one bin (its two distinct edges)
    q = np.quantile(x[:, 0].numpy().astype(np.float64), np.linspace(0, 1, 9))
    assert np.allclose(net.num.left[0].numpy(), q[:-1], atol=1e-6)
    e = net.num(x)
    assert torch.all(e[:, 1, 1:] == 0) and torch.all((e[:, 0] >= 0) & (e[:, 0] <= 1))  # inside the training range


def test_tree_bins_find_a_step_in_the_target():
    x = np.random.default_rng(0).random((2000, 1))
    y = (x[:, 0] > 0.3).astype(np.float64)
    edges = tree_edges(x, y, 4, classification=False)[0]
    assert np.min(np.abs(edges - 0.3)) < 0.01 and len(edges) <= 5


def test_periodic_is_eq2_with_trainable_normal_frequencies():
    torch.manual_seed(0)
    p = PeriodicEmbeddings(3, n_frequencies=4000, sigma=0.5, d_embedding=None)
    assert abs(float(p.frequencies.detach().std()) - 0.5) < 0.02 and p.frequencies.requires_grad
    x = torch.tensor([[0.3, -1.0, 2.0]])
    v = 2 * math.pi * p.frequencies * x[..., None]
    assert torch.allclose(p(x), torch.cat([torch.sin(v), torch.cos(v)], -1))
    plr = PeriodicEmbeddings(3, n_frequencies=4, sigma=1.0, d_embedding=5)
    out = plr(torch.randn(7, 3))
    assert out.shape == (7, 3, 5) and torch.all(out >= 0)  # Linear + ReLU
    assert plr.weight.shape == (3, 8, 5)  # a separate linear layer per feature; lite shares one
    assert PeriodicEmbeddings(3, 4, 1.0, 5, lite=True).shared.weight.shape == (5, 8)


def _fit(net: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, steps: int = 300) -> float:
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    xc = torch.zeros(len(x), 0, dtype=torch.long)
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(net(x, xc), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


def test_embeddings_fit_a_high_frequency_target_the_plain_mlp_cannot():
    torch.manual_seed(0)
    x = torch.rand(256, 1) * 2 - 1
    y = torch.sin(6 * math.pi * x[:, 0])  # three periods over [-1, 1]
    plain = NumEmbedMLP(n_num=1, embedding="none", width=32)
    ple = mlp_ple(n_num=1, n_bins=24, width=32)
    ple.prepare(x, y)
    plr = mlp_plr(n_num=1, sigma=1.0, width=32)
    losses = {name: _fit(net, x, y) for name, net in (("plain", plain), ("ple", ple), ("plr", plr))}
    assert losses["ple"] < 0.5 * losses["plain"] and losses["plr"] < 0.5 * losses["plain"], losses


def test_presets_and_errors():
    assert mlp_plr(preset="paper").num.k == PAPER["n_frequencies"] == 48
    with pytest.raises(ValueError, match="preset"):
        mlp_plr(preset="huge")
    with pytest.raises(ValueError, match="embedding"):
        NumEmbedMLP(embedding="fourier")
    with pytest.raises(ValueError, match="bins"):
        mlp_ple(bins="uniform")
    with pytest.raises(ValueError, match="strictly increasing"):
        PiecewiseLinearEncoding(1, 2).set_edges([np.array([0.0, 0.0, 1.0])])


@pytest.mark.parametrize("name", ["mlp_plr", "mlp_ple"])
def test_pretrained_california_tag_scores_its_card_without_training(name):
    import json
    from pathlib import Path

    import zoo
    import zoo_tabular_num_embed
    from zoo_task_tabular_ctr import task

    tag = zoo.create(f"{name}.california_housing", pretrained=True)
    before = {k: v.clone() for k, v in tag.state_dict().items()}
    r = task.evaluate(tag, mode="table", dataset="california_housing", baselines=[])
    folder = Path(zoo_tabular_num_embed.__file__).parent / "weights" / f"{name}.california_housing"
    card = json.loads((folder / "config.json").read_text())["metrics"]
    assert r.config["trained"] is False and all(torch.equal(before[k], v) for k, v in tag.state_dict().items())
    assert r.metrics["rmse"] == pytest.approx(card["test_rmse"], rel=1e-5)
    assert card["test_rmse"] < card["mlp_test_rmse"]  # the shipped weights beat the plain MLP trained alongside
    with pytest.raises(ValueError, match="pretrained tag"):
        task.evaluate(tag, mode="table", dataset="diabetes", baselines=[])
