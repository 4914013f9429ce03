"""ssl_probe: known answers of the probes and collapse indicators, the data of every mode, the views, the training
loop's schedule, and the protocol's contract and errors."""
from __future__ import annotations

import importlib.util
import math

import pytest
import torch
from torch import nn

from zoo_task_ssl_probe import augment, data, probe, task
from zoo_task_ssl_probe.baselines import BASELINES, ConvEncoder, Raw, build_baseline
from zoo_task_ssl_probe.train import pretrain, settings


def test_probes_known_answers():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(4).repeat_interleave(50)
    centres = 5 * torch.eye(4, 8)
    f = centres[y] + 0.3 * torch.randn(200, 8, generator=g)
    noise = torch.randn(200, 8, generator=g)
    assert probe.linear_probe(f, y, f, y) == 1.0 and probe.knn(f, y, f, y) == 1.0
    assert probe.few_shot(f, y, f, y, shots=5) == 1.0
    # features independent of the labels: chance level (4 classes) within sampling noise, on held-out points
    assert probe.knn(noise[:100], y[::2], noise[100:], y[1::2]) < 0.45
    # a linear probe needs standardisation to read a tiny-scale feature next to a huge irrelevant one
    f2 = torch.stack([1e-4 * (y % 2).float() + 1e-6 * noise[:, 0], 1e4 * noise[:, 1]], 1)
    assert probe.linear_probe(f2, y % 2, f2, y % 2) == 1.0


def test_collapse_indicators_exact():
    c = probe.collapse(torch.ones(50, 16))
    assert c["feature_std"] == pytest.approx(0.0, abs=1e-12) and c["effective_rank"] == pytest.approx(1.0)
    iso = probe.collapse(torch.eye(16))  # equal singular values: effective rank = D
    assert iso["effective_rank"] == pytest.approx(16.0)
    g = torch.randn(20_000, 16, generator=torch.Generator().manual_seed(1))
    assert probe.collapse(g)["feature_std"] == pytest.approx(1 / math.sqrt(16), rel=0.02)


def test_image_data_and_views():
    fm, dg = data.fashion_mnist(), data.digits()
    assert fm.x_train.shape == (10_000, 1, 28, 28) and fm.x_test.shape == (10_000, 1, 28, 28)
    assert fm.x_pretrain is fm.x_train and 0.0 <= float(fm.x_train.min()) and float(fm.x_train.max()) <= 1.0
    assert fm.y_test.bincount().tolist() == [1000] * 10
    assert (len(dg.y_train), len(dg.y_test), dg.x_test.shape[1:]) == (1347, 450, (1, 8, 8))
    x = fm.x_test[:6]
    same = augment.image_view(x, torch.Generator(), scale=(1.0, 1.0), ratio=(1.0, 1.0), flip=0.0, jitter=0.0, noise=0.0)
    assert torch.allclose(same, x, atol=1e-5)
    mirror = augment.image_view(x, torch.Generator(), scale=(1.0, 1.0), ratio=(1.0, 1.0), flip=1.0, jitter=0.0, noise=0.0)
    assert torch.allclose(mirror, x.flip(-1), atol=1e-5)
    a = augment.image_view(x, torch.Generator().manual_seed(3))
    assert torch.equal(a, augment.image_view(x, torch.Generator().manual_seed(3)))
    assert not torch.allclose(a, x, atol=1e-2) and 0.0 <= float(a.min()) and float(a.max()) <= 1.0


def test_series_data_and_views(tmp_path):
    ms = data.multiscale()
    assert ms.x_train.shape == (1000, 128) and ms.x_test.shape == (500, 128)
    assert torch.equal(ms.x_train, data.multiscale_series(200, 0)[0])
    scale = ms.x_train.std(1)
    assert float(scale.min()) < 1e-2 and float(scale.max()) > 1e2  # raw values over six decades
    ts = tmp_path / "toy.ts"
    ts.write_text("# comment\n@problemName toy\n@classLabel true a b\n@data\n1,2,3:a\n4,5,?:b\n")
    vals, labels = data.read_ts(ts)
    assert vals.shape == (2, 3) and labels == ["a", "b"] and math.isnan(vals[1, 2])
    gp = data.ucr("gunpoint")
    assert gp.x_train.shape == (50, 150) and gp.x_test.shape == (150, 150) and gp.n_classes == 2
    assert torch.allclose(gp.x_test.mean(1), torch.zeros(150), atol=1e-5)
    with pytest.raises(ValueError, match="znorm"):
        data.ucr("gunpoint", "minmax")
    s = ms.x_test[:4]
    v = augment.series_view(s, torch.Generator().manual_seed(0))
    assert v.shape == s.shape and not torch.allclose(v, s)
    # scaling and crop act relative to each series: the view's scale tracks the series' own scale
    ratio = v.std(1) / s.std(1)
    assert bool(((ratio > 0.5) & (ratio < 1.6)).all())


class _Toy(nn.Module):
    """A linear encoder whose ssl_loss pulls its output to 1: the loss falls under training."""

    ssl_views = 1

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(64, 4)
        self.head = nn.Linear(4, 4)

    def encode(self, x):
        return self.lin(x.flatten(1))

    def ssl_loss(self, x):
        return ((self.encode(x) - 1) ** 2).mean()

    def ssl_param_groups(self):
        return [{"params": list(self.lin.parameters())}, {"params": list(self.head.parameters()), "fixed_lr": True}]


def test_pretrain_schedule_and_settings():
    m = _Toy()
    x = data.digits().x_train
    losses = []

    def sample(g, batch):
        return (x[torch.randint(len(x), (batch,), generator=g)],)

    first = m.ssl_loss(x).item()
    out = pretrain(m, sample, steps=50, seed=0, optimizer="sgd", lr=0.05, batch=32)
    losses.append(out["final_train_loss"])
    assert out["steps"] == 50 and losses[0] < 0.5 * first and not m.training
    with pytest.raises(ValueError, match="choose from"):
        settings(None, optimizer="lion")
    with pytest.raises(ValueError, match="unknown training option"):
        settings(None, lr_decay=0.1)
    m.ssl_defaults = {"lr": 0.3}
    assert settings(m)["lr"] == 0.3 and settings(m, lr=0.2)["lr"] == 0.2


def test_evaluate_digits_protocol_and_baselines():
    enc = build_baseline("random_init", params=20_000, mode="digits")
    assert abs(sum(p.numel() for p in enc.encoder.parameters()) - 20_000) < 2_000
    r = task.evaluate(build_baseline("supervised", mode="digits"), mode="digits", steps=3, baselines=["raw"],
                      batch=16)
    assert set(r.baselines) == {"raw"} and r.n == 450 and r.config["mode"] == "digits"
    for key in ("linear_probe_acc", "knn_acc", "fewshot_acc", "feature_std", "effective_rank",
                "linear_probe_acc_init", "pretrain_seconds", "final_ssl_loss", "params"):
        assert key in r.metrics
    assert r.baselines["raw"]["params"] == 0 and r.baselines["raw"]["knn_acc"] > 0.9  # raw digits are near-separable
    assert BASELINES == ("supervised", "random_init", "raw")


def test_contract_and_errors():
    enc = ConvEncoder(width=4)
    x = task.example_input(enc)
    assert x.shape == (4, 1, 28, 28)
    with pytest.raises(AssertionError, match="ssl_loss"):
        task.check_output(enc, enc(x))
    task.check_output(build_baseline("supervised"), torch.zeros(4, 8))
    with pytest.raises(AssertionError, match="batch size 4"):
        task.check_output(build_baseline("supervised"), torch.zeros(3, 8))
    assert task.example_input(Raw("series")).shape == (4, 128)
    with pytest.raises(ValueError, match="choose from"):
        task.evaluate(Raw(), mode="cifar")
    with pytest.raises(ValueError, match="choose from"):
        task.evaluate(Raw(), mode="digits", baselines=["byol"])
    with pytest.raises(ValueError, match="data options"):
        task.evaluate(Raw(), mode="digits", dataset="gunpoint")
    with pytest.raises(ValueError, match="choose from"):
        data.ucr("ecg5000")
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("byol")
    if importlib.util.find_spec("zoo_task_ssl_probe.pong") is None:
        with pytest.raises(NotImplementedError, match="pong.py"):
            task.evaluate(Raw(), mode="pong")
