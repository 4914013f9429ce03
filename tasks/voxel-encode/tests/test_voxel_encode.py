"""voxel_encode: real images and fixed features, seeded sparse voxels, the ridge baseline's exact case, and metrics
that separate a context-using model from one that ignores the context."""
from __future__ import annotations

import pytest
import torch

from zoo_task_voxel_encode import data, task
from zoo_task_voxel_encode.baselines import MeanResponse, RidgeCV, build_baseline, ridge_loo

SMALL = dict(n_train_voxels=40, n_test_voxels=20, n_test_images=300, episodes=1)


@pytest.fixture(autouse=True)
def _offline_data_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "skl"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_images_and_features_are_fixed():
    imgs, source = data.images()
    assert imgs.shape == (1997, 16, 16) and 0.0 <= imgs.min() and imgs.max() <= 1.0
    assert (source == 0).sum() == 1797 and (source == 1).sum() == 100 and (source == 2).sum() == 100
    f = data.features()
    assert f.shape == (1997, data.N_FEATURES)
    assert torch.allclose(f.mean(0), torch.zeros(64), atol=1e-4) and torch.allclose(f.std(0), torch.ones(64), atol=1e-4)
    # the CNN comes from CNN_SEED, never from the caller's RNG state
    torch.manual_seed(99)
    a = data.random_cnn()[0].weight
    torch.manual_seed(7)
    assert torch.equal(a, data.random_cnn()[0].weight)


def test_voxels_are_seeded_and_sparse():
    f = data.features()[:300]
    a, b, c = data.voxels(50, f, seed=3, k=4), data.voxels(50, f, seed=3, k=4), data.voxels(50, f, seed=4, k=4)
    assert torch.equal(a.responses, b.responses) and not torch.equal(a.responses, c.responses)
    nz = a.weights != 0
    assert nz.sum(1).tolist() == [4] * 50  # exactly k features per voxel
    assert torch.equal(nz, torch.zeros_like(nz).scatter_(1, a.support, True))
    noise_var = (a.responses - a.clean).var(1).mean()
    assert float(noise_var) == pytest.approx(1.0, rel=0.15)  # snr 1: noise variance = signal variance = 1
    clean = data.voxels(5, f, seed=3, snr=float("inf"))
    assert torch.equal(clean.responses, clean.clean)
    with pytest.raises(ValueError, match="k="):
        data.voxels(2, f, seed=0, k=65)


def test_ridge_is_exact_on_noiseless_linear_voxels():
    f = data.features()
    lin = data.voxels(6, f, seed=0, gain=0.0, snr=float("inf"))  # gain 0: the readout is linear
    idx = torch.arange(100)
    pred = RidgeCV()(f[idx].expand(6, -1, -1), lin.responses[:, idx], f[200:700].expand(6, -1, -1))
    r = task._pearson(pred, lin.clean[:, 200:700])
    assert float(r.min()) > 0.999
    w, b, lam = ridge_loo(f[idx].expand(6, -1, -1), lin.responses[:, idx])
    assert float(lam.max()) <= 1e-2  # LOO CV picks (almost) no shrinkage on noiseless data
    # with noise, CV shrinks more
    noisy = data.voxels(6, f, seed=0, gain=0.0, snr=0.25)
    assert float(ridge_loo(f[:20].expand(6, -1, -1), noisy.responses[:, :20])[2].min()) > 1e-2
    with pytest.raises(ValueError, match="2 shots"):
        ridge_loo(torch.randn(1, 1, 3), torch.randn(1, 1))


def test_evaluate_scores_context_use_and_writes_the_curve(tmp_path):
    r = task.evaluate(RidgeCV(), contexts=(5, 100), seed=0, out_dir=str(tmp_path), **SMALL)
    m, base = r.metrics, r.baselines
    assert m["params"] == 0 and "steps" not in m  # nothing to meta-train
    assert m["r_c100"] > m["r_c5"] + 0.2 and m == {**base["ridge"], "params": 0.0}
    assert base["ridge_full"]["r_c5"] == base["ridge_full"]["r_c100"] > m["r_c100"]
    assert base["mean_response"]["r_c5"] == base["mean_response"]["r_c100"] < m["r_c100"]
    assert (tmp_path / "r_vs_context.png").stat().st_size > 1000 and r.artifacts["r_vs_context"].endswith(".png")
    assert r.config["snr"] == 1.0 and r.config["contexts"] == [5, 100]
    again = task.evaluate(RidgeCV(), contexts=(5,), seed=0, baselines=[], **SMALL)
    assert again.metrics["r_c5"] == m["r_c5"]  # seeded draws


def test_errors_name_the_fix():
    with pytest.raises(ValueError, match=">= 2"):
        task.evaluate(RidgeCV(), contexts=(1, 5), **SMALL)
    with pytest.raises(ValueError, match="choose from"):
        task.evaluate(RidgeCV(), baselines=["lasso"], **SMALL)
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("lasso")
    with pytest.raises(ValueError, match="data="):
        build_baseline("mean_response")
    with pytest.raises(ValueError, match="unknown option"):
        task.describe(shots=3)


def test_contract_helpers():
    x = task.example_input()
    assert [tuple(t.shape) for t in x] == [(2, 5, 64), (2, 5), (2, 7, 64)]
    task.check_output(RidgeCV(), RidgeCV()(*x))
    with pytest.raises(AssertionError, match="B=2, Nq=7"):
        task.check_output(RidgeCV(), torch.zeros(2, 5))
    sp = data.split(seed=0, n_train_voxels=10, n_test_voxels=2, n_test_images=100)
    mean = build_baseline("mean_response", data=sp)
    assert isinstance(mean, MeanResponse) and torch.equal(mean(*x)[0], mean(x[0], -x[1], x[2])[0])  # ignores context
