"""multidim-features: conformance, known answers (a planted circle is found with its angles, a planted line is not
circular, a mixture of non-co-occurring features has a high mixture index, independent Gaussians are separable), the
rotation's exact properties, validation, the tools via zoo.analyze, and the intervention on the icl_toy GPT (the
circle plane moves predictions, a random plane does not)."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_multidim_features.circle import (
    circle_fit,
    circularity,
    mixture_index,
    random_plane,
    rotate_in_plane,
    separability_index,
    shuffled_circularity,
)


def test_conformance(hub):
    check_plugin("multidim-features")


def _planted_circle(p=7, n_per=40, d=16, noise=0.1, seed=0, winding=1):
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    lab = np.repeat(np.arange(p), n_per)
    ang = 0.7 + winding * 2 * np.pi * lab / p
    x = 3.0 * np.c_[np.cos(ang), np.sin(ang)] @ basis.T + noise * rng.standard_normal((len(lab), d)) + 5.0
    return x, lab, basis


@pytest.mark.parametrize("winding", [1, 2])
def test_planted_circle_is_found_with_its_angles(winding):
    x, lab, basis = _planted_circle(winding=winding)
    fit = circle_fit(x, lab)
    assert fit["circularity"] > 0.99 and fit["winding"] == winding and fit["plane_variance"] > 0.99
    assert fit["radius_cv"] < 0.05 and fit["angle_rmse"] < 0.05 and fit["aspect"] > 0.95
    # the plane is the planted one (projector equality), and the angles step by the winding, up to orientation
    assert np.allclose(fit["basis"] @ fit["basis"].T, basis @ basis.T, atol=0.02)
    steps = np.angle(np.exp(1j * np.diff(fit["angles"])))
    assert np.allclose(np.abs(steps), winding * 2 * np.pi / 7, atol=0.05)
    assert shuffled_circularity(x, lab, seed=0) < 0.75


def test_planted_line_is_not_circular():
    rng = np.random.default_rng(1)
    lab = np.repeat(np.arange(7), 40)
    direction = rng.standard_normal(16)
    x = np.outer(lab, direction) + 0.05 * rng.standard_normal((len(lab), 16))
    fit = circle_fit(x, lab)
    # angles only 0 or pi: the max over windings can still score high, but the plane is flat and radii spread
    assert fit["aspect"] < 0.01 and fit["radius_cv"] > 0.4 and fit["angle_rmse"] > 0.5
    assert fit["circularity"] < circle_fit(*_planted_circle()[:2])["circularity"] - 0.2


def test_mixture_index_finds_non_co_occurring_features_not_a_circle():
    # §3's reducible "mixture": half the points on axis a (b = 0), half on axis b (a = 0)
    rng = np.random.default_rng(4)
    n = 1000
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    mix = np.r_[np.c_[a[: n // 2], np.zeros(n // 2)], np.c_[np.zeros(n // 2), b[n // 2:]]]
    mix += 0.005 * rng.standard_normal(mix.shape)
    xc, labc, _ = _planted_circle(noise=0.05)
    zc = (xc - xc.mean(0)) @ circle_fit(xc, labc)["basis"]
    assert mixture_index(mix) > 0.45 > 0.3 > mixture_index(zc)


def test_separability_of_independent_gaussians_vs_circle():
    rng = np.random.default_rng(2)
    g = rng.standard_normal((2000, 2)) * [1.0, 3.0]
    t = rng.uniform(0, 2 * np.pi, 2000)
    ring = np.c_[np.cos(t), np.sin(t)] + 0.03 * rng.standard_normal((2000, 2))
    assert separability_index(g) < 0.05 < 0.3 < separability_index(ring)


def test_circularity_closed_form():
    p = 12
    k = np.arange(p)
    out = circularity(0.3 - 5 * 2 * np.pi * k / p)
    assert out["circularity"] == pytest.approx(1.0) and out["winding"] == 5 and out["sign"] == -1
    assert out["step"] == pytest.approx(-5 * 2 * np.pi / p) and out["phase"] == pytest.approx(0.3)


def test_rotation_is_exact():
    x, lab, _ = _planted_circle(noise=0.0)
    fit = circle_fit(x, lab)
    moved = rotate_in_plane(fit["center"] + fit["coords"] @ fit["basis"].T, fit["basis"], fit["center"], fit["step"])
    means = np.stack([x[lab == k].mean(0) for k in range(7)])
    assert np.allclose(moved, np.roll(means, -1, axis=0), atol=1e-8)  # class k lands on class k + 1
    q = random_plane(16, seed=3)
    y = rotate_in_plane(x, q, x.mean(0), 1.1)
    assert np.allclose(np.linalg.norm(y - x.mean(0), axis=1), np.linalg.norm(x - x.mean(0), axis=1))
    assert np.allclose(rotate_in_plane(y, q, x.mean(0), -1.1), x)


def test_validation_names_the_requirement():
    x = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises(ValueError, match="classes \\[2\\] have no points"):
        circle_fit(x, np.r_[np.zeros(10, int), np.ones(10, int)], period=3)
    with pytest.raises(ValueError, match="period of at least 3"):
        circle_fit(x, np.r_[np.zeros(10, int), np.ones(10, int)])
    with pytest.raises(ValueError, match="integers"):
        circle_fit(x, np.linspace(0, 1, 20))
    with pytest.raises(ValueError, match="one integer label per point"):
        circle_fit(x, np.zeros(5, int))
    with pytest.raises(ValueError, match="2-D feature"):
        separability_index(x)
    with pytest.raises(ValueError, match="needs labels"):
        zoo.analyze("circle-fit", {"h": x})
    with pytest.raises(ValueError, match="D >= 2"):
        zoo.analyze("irreducibility", {"h": x[:, :1]})


def test_tools_on_raw_arrays_and_through_a_model(tmp_path):
    x, lab, _ = _planted_circle()
    res = zoo.analyze("circle-fit", {"h": x}, labels=lab, out_dir=str(tmp_path))
    assert res["layers"]["h"]["circularity"] > 0.99 and (tmp_path / "circle_fit.png").exists()
    irr = zoo.analyze("irreducibility", {"h": x}, labels=lab)["layers"]["h"]
    assert irr["mixture"] < 0.5 and irr["separability"] > 0.3
    from zoo_task_digits.task import probe_data

    xs, ys = probe_data(60)
    out = zoo.analyze("circle-fit", zoo.create("gelu_mlp_digits"), inputs=xs, labels=ys, layers=["output"])
    assert 0 <= out["layers"]["output"]["circularity"] <= 1 and out["layers"]["output"]["period"] == 10


def test_rotation_hook_is_exact_on_a_tiny_gpt():
    import torch

    from zoo_multidim_features.intervene import predict_rotated, prompts
    from zoo_task_icl_toy.models import build_gpt

    torch.manual_seed(0)
    gpt = build_gpt("token", dim=16, depth=2, heads=2).eval()
    ids, _, _ = prompts("weekday", 20, seed=0)
    with torch.no_grad():
        clean = gpt(torch.from_numpy(ids))[:, -1].argmax(-1).numpy()
    q, c = random_plane(16, seed=1), np.random.default_rng(0).standard_normal(16)
    assert (predict_rotated(gpt, ids, 1, q, c, 0.0) == clean).all()
    assert (predict_rotated(gpt, ids, 1, q, c, 2 * np.pi) == clean).all()
    with pytest.raises(ValueError, match="unknown kind"):
        prompts("year", 5, seed=0)


def _trained_token_gpt():
    """The icl_toy token GPT from the user's zoo cache (the tests' hermetic cache is empty and training it takes
    minutes): skipped when it was never trained (``zoo reproduce multidim-features`` trains and caches it)."""
    import os
    from pathlib import Path

    from safetensors.torch import load_file

    from zoo_task_icl_toy.models import build_gpt, cache_path

    name = cache_path("token").name
    roots = [Path(os.path.expanduser("~/.cache")), Path(os.environ.get("XDG_CACHE_HOME") or "~")]  # hermetic XDG
    path = next((r / "zoo" / "icl_toy" / name for r in roots if (r / "zoo" / "icl_toy" / name).exists()),
                roots[0] / "zoo" / "icl_toy" / name)
    if not path.exists():
        pytest.skip(f"icl_toy token GPT not cached at {path}; run `zoo reproduce multidim-features` once")
    gpt = build_gpt("token")
    gpt.load_state_dict(load_file(str(path)))
    return gpt.eval().requires_grad_(False)


def test_intervention_circle_plane_beats_random_plane():
    from zoo_multidim_features.intervene import circle_experiment

    r = circle_experiment(_trained_token_gpt(), "weekday", seed=0, n_fit=200, n_test=60)
    assert r["clean_accuracy"] > 0.9
    assert r["rotation_shift"] > r["control_shift"] + 0.2 and r["control_keep"] > 0.8


def test_decoder_clusters_recover_planted_subspaces():
    from zoo_multidim_features.circle import cluster_directions

    rng = np.random.default_rng(5)
    planes = [np.linalg.qr(rng.standard_normal((64, 2)))[0] for _ in range(4)]
    w = np.concatenate([(p @ rng.standard_normal((2, 12))).T for p in planes])  # 12 directions in each 2-D plane
    lab = cluster_directions(w, 4, seed=0)
    truth = np.repeat(np.arange(4), 12)
    assert all(len(set(lab[truth == j])) == 1 for j in range(4)) and len(set(lab)) == 4
    res = zoo.analyze("decoder-clusters", {"W_dec": w}, n_clusters=4)["layers"]["W_dec"]
    assert sorted(res["sizes"]) == [12] * 4 and all(1.5 < d <= 2.0 + 1e-6 for d in res["effective_dims"])
    with pytest.raises(ValueError, match="n_clusters must be in"):
        cluster_directions(w, 0)
