"""din: the conformance kit, Dice (Eq. 8), the local activation unit (ad-dependent, unnormalised weights, padding
ignored), the mini-batch aware regulariser (Eqs. 4-6), and a short fit where DIN beats sum pooling."""
from __future__ import annotations

import pytest
import torch

from zoo.testing import check_plugin
from zoo_din.model import DIN, PAPER, Dice, din
from zoo_task_tabular_ctr.ctr_baselines import PooledEmbeddingMLP

TINY = {"n_items": 50, "dim": 4, "hidden": [8, 4], "att_hidden": 6}


def test_conformance(hub):
    check_plugin("din", overrides={"din": TINY})


def test_dice_is_eq8_with_batch_statistics():
    torch.manual_seed(0)
    d = Dice(3)
    with torch.no_grad():
        d.alpha.copy_(torch.tensor([0.0, 0.25, -0.5]))
    s = torch.randn(64, 3) * 2 + 1
    p = torch.sigmoid((s - s.mean(0)) / torch.sqrt(s.var(0, unbiased=False) + 1e-8))
    assert torch.allclose(d.train()(s), p * s + (1 - p) * d.alpha * s, atol=1e-5)
    # at inference the moving averages replace the batch's: a single row is scored like the same row in a batch
    d.eval()
    assert torch.allclose(d(s[:1]), d(s)[:1])


def _net(**kw) -> DIN:
    torch.manual_seed(0)
    net = din(n_items=30, n_dense=1, dim=6, hidden=(8,), att_hidden=5, **kw).eval()
    with torch.no_grad():
        net.item.weight.normal_()
    return net


def test_activation_unit_weights_depend_on_the_ad_and_are_not_normalised():
    net = _net()
    hist = torch.tensor([[3, 7, 9, 0], [3, 7, 9, 0]])
    mask = torch.tensor([[True, True, True, False]] * 2)
    v, w = net.interest(hist, mask, torch.tensor([4, 11]))
    assert not torch.allclose(w[0], w[1]) and not torch.allclose(v[0], v[1])  # sum pooling's v ignores the ad
    assert w[0, 3] == 0 and not torch.allclose(w[0, :3].sum(), torch.tensor(1.0))  # padding 0, no softmax
    # Eq. 3 is a weighted SUM: repeating a behaviour doubles its part (mean pooling would not change)
    one, _ = net.interest(torch.tensor([[5, 0]]), torch.tensor([[True, False]]), torch.tensor([4]))
    two, _ = net.interest(torch.tensor([[5, 5]]), torch.tensor([[True, True]]), torch.tensor([4]))
    assert torch.allclose(two, 2 * one, atol=1e-6)
    # ids behind the mask do not matter
    a = net(hist, mask, torch.tensor([4, 4]), torch.zeros(2, 1))
    b = net(torch.tensor([[3, 7, 9, 21], [3, 7, 9, 28]]), mask, torch.tensor([4, 4]), torch.zeros(2, 1))
    assert torch.allclose(a, b)


def test_mini_batch_aware_l2_touches_only_ids_in_the_batch_over_their_counts():
    net = _net(mba_lambda=0.2).train()
    hist = torch.tensor([[1, 2, 0], [2, 2, 3]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    ad = torch.tensor([4, 1])
    net.prepare(hist, mask, ad, torch.zeros(2, 1), torch.zeros(2))
    assert net.id_counts[[1, 2, 3, 4, 5]].tolist() == [2.0, 3.0, 1.0, 1.0, 1.0]  # unseen ids count 1
    reg = net.extra_loss(hist, mask, ad, torch.zeros(2, 1))
    w = net.item.weight.detach()
    want = 0.1 * sum(float((w[j] ** 2).sum()) / c for j, c in ((1, 2), (2, 3), (3, 1), (4, 1)))
    assert float(reg.detach()) == pytest.approx(want, rel=1e-5)
    reg.backward()
    touched = (net.item.weight.grad.abs().sum(1) > 0).nonzero().flatten().tolist()
    assert touched == [1, 2, 3, 4]  # id 0 (padding) and every id outside the batch get no gradient
    assert float(_net(mba_lambda=0.0).extra_loss(hist, mask, ad, None)) == 0.0


def test_din_beats_sum_pooling_on_a_max_similarity_click_rule():
    """A tiny multi-interest log: a click when the ad shares a cluster with ANY behaviour. The max over behaviours
    is what DIN's ad-dependent weights can express and a sum of behaviour embeddings cannot."""
    g = torch.Generator().manual_seed(0)
    n, n_items, k = 3000, 41, 8
    cluster = torch.arange(n_items) % k
    hist = torch.randint(1, n_items, (n, 6), generator=g)
    mask = torch.ones(n, 6, dtype=torch.bool)
    ad = torch.randint(1, n_items, (n,), generator=g)
    y = (cluster[hist] == cluster[ad][:, None]).any(1).float()
    dense = torch.zeros(n, 1)

    def fit(net: torch.nn.Module) -> float:
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        for step in range(120):
            i = torch.randint(0, 2500, (250,), generator=torch.Generator().manual_seed(step))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(hist[i], mask[i], ad[i], dense[i]), y[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            z = net(hist[2500:], mask[2500:], ad[2500:], dense[2500:])
        return float(((z > 0).float() == y[2500:]).float().mean())

    torch.manual_seed(0)
    acc_din = fit(din(n_items=n_items, n_dense=1, dim=8, hidden=(32, 16), att_hidden=16, mba_lambda=0.0))
    torch.manual_seed(0)
    acc_sum = fit(PooledEmbeddingMLP(n_items, 1, dim=8, width=32))
    assert acc_din > acc_sum + 0.05, (acc_din, acc_sum)


def test_presets_and_errors():
    assert din(preset="paper").dim == PAPER["dim"] == 64
    with pytest.raises(ValueError, match="preset"):
        din(preset="alibaba")
    with pytest.raises(ValueError, match="activation"):
        din(activation="relu")
    with pytest.raises(ValueError, match="n_items"):
        DIN(n_items=1)


def test_pretrained_movielens_tag_scores_its_card_without_training():
    import json
    from pathlib import Path

    import zoo
    import zoo_din
    from zoo_task_tabular_ctr import task

    tag = zoo.create("din.movielens", pretrained=True)
    before = {k: v.clone() for k, v in tag.state_dict().items()}
    r = task.evaluate(tag, mode="ctr", dataset="movielens", baselines=[])
    card = json.loads((Path(zoo_din.__file__).parent / "weights" / "din.movielens" / "config.json").read_text())
    assert r.config["trained"] is False and all(torch.equal(before[k], v) for k, v in tag.state_dict().items())
    assert r.metrics["auc"] == pytest.approx(card["metrics"]["auc"], abs=1e-9) and r.metrics["auc"] > 0.7
    with pytest.raises(ValueError, match="pretrained tag"):
        task.evaluate(tag, mode="ctr", dataset="synthetic", baselines=[])
