"""rep_metrics: the similarity statistics' known answers and invariances, their input checks, the seeded cached
sources and evaluate's contract."""
from __future__ import annotations

import numpy as np
import pytest

from zoo.testing import check_plugin
from zoo_task_rep_metrics import similarity as sim


def _x(seed=0, n=60, d=8):
    return np.random.default_rng(seed).normal(size=(n, d))


def _orthogonal(d, seed=1):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q


def test_conformance():
    check_plugin("task-rep-metrics")


def test_identical_representations_give_one():
    x = _x()
    assert sim.linear_cka(x, x) == pytest.approx(1.0, abs=1e-12)
    assert sim.linear_cka(x, x, debiased=True) == pytest.approx(1.0, abs=1e-12)
    assert sim.rbf_cka(x, x) == pytest.approx(1.0, abs=1e-12)
    assert sim.cca_similarity(x, x) == pytest.approx(1.0, abs=1e-9)
    assert sim.rsa(x, x) == pytest.approx(1.0, abs=1e-12)
    assert sim.rsa(x, x, "pearson", metric="euclidean") == pytest.approx(1.0, abs=1e-12)


def test_cka_invariances_and_what_breaks_them():
    x = _x(n=80, d=10)
    q = _orthogonal(10)
    assert sim.linear_cka(x, 3.7 * x @ q) == pytest.approx(1.0, abs=1e-10)
    assert sim.linear_cka(x, x @ q + 5.0) == pytest.approx(1.0, abs=1e-10)  # centring: offsets do not matter
    assert sim.linear_cka(x, x @ q, debiased=True) == pytest.approx(1.0, abs=1e-10)
    assert sim.rbf_cka(x, 2.0 * x @ q) == pytest.approx(1.0, abs=1e-10)  # bandwidth follows the median distance
    # an arbitrary (invertible, badly conditioned) linear map changes linear CKA; CCA does not care
    a = np.random.default_rng(2).normal(size=(10, 10)) @ np.diag(np.logspace(0, 2, 10))
    assert sim.linear_cka(x, x @ a) < 0.9
    assert sim.cca_similarity(x, x @ a) == pytest.approx(1.0, abs=1e-8)


def test_independent_representations_score_low_and_a_planted_subspace_is_found():
    x, y = _x(0, n=400, d=5), _x(1, n=400, d=5)
    assert sim.linear_cka(x, y) < 0.1 and sim.linear_cka(x, y, debiased=True) < 0.05
    assert sim.cca_similarity(x, y) < 0.2 and abs(sim.rsa(x, y)) < 0.1
    # Y shares 2 of X's 5 directions (plus 3 of its own): 2 of the 5 canonical correlations are 1
    shared = np.hstack([x[:, :2], y[:, :3]])
    rho = sim.cca_canonical_correlations(x, shared)
    assert rho[:2] == pytest.approx([1.0, 1.0], abs=1e-8) and rho[2] < 0.3


def test_debiased_cka_removes_the_high_dimension_bias():
    # N=40 inputs, 500 independent noise features each side: plain CKA is far from 0 (0.93), debiased is 0 on
    # average over draws (each draw fluctuates by about 0.05)
    assert sim.linear_cka(_x(0, n=40, d=500), _x(1, n=40, d=500)) > 0.5
    draws = [sim.linear_cka(_x(s, n=40, d=500), _x(s + 50, n=40, d=500), debiased=True) for s in range(8)]
    assert abs(np.mean(draws)) < 0.03


def test_unbiased_hsic_is_the_u_statistic():
    # Song et al. (2012): the average over ordered 4-tuples of distinct indices of
    # K_ij L_ij + K_ij L_qs - 2 K_ij L_iq, computed by brute force on 7 points
    import itertools

    n = 7
    k, m = _x(3, n, 3), _x(4, n, 2)
    k, m = k @ k.T, m @ m.T
    terms = [k[i, j] * m[i, j] + k[i, j] * m[q, s] - 2 * k[i, j] * m[i, q]
             for i, j, q, s in itertools.permutations(range(n), 4)]
    assert sim._hsic_unbiased(k, m) == pytest.approx(np.mean(terms), rel=1e-10)


def test_rdm_known_values():
    x = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    d = sim.rdm(x, "euclidean")
    assert d[0, 1] == pytest.approx(5.0) and d[0, 2] == pytest.approx(10.0) and np.allclose(np.diag(d), 0)
    c = sim.rdm(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 2.0, 1.0]]))
    assert c[0, 1] == pytest.approx(0.0, abs=1e-12) and c[0, 2] == pytest.approx(2.0)
    # RSA on precomputed RDMs; a monotone transform of one RDM keeps Spearman at 1
    x = _x(3, n=20)
    assert sim.rsa(sim.rdm(x), sim.rdm(x) ** 3, metric="precomputed") == pytest.approx(1.0)


@pytest.mark.parametrize("call, match", [
    (lambda: sim.linear_cka(np.ones((5, 2, 2)), np.ones((5, 2))), "expected an .N, D. matrix"),
    (lambda: sim.linear_cka(_x(n=5), _x(n=6)), "same inputs"),
    (lambda: sim.linear_cka(_x(n=1), _x(n=1)), "at least 2"),
    (lambda: sim.linear_cka(_x(n=3), _x(n=3), debiased=True), "at least 4"),
    (lambda: sim.linear_cka(np.where(np.eye(6, 3) > 0, np.nan, 1.0), _x(n=6, d=3)), "NaN"),
    (lambda: sim.linear_cka(np.ones((6, 3)), _x(n=6)), "zero variance"),
    (lambda: sim.cca_similarity(_x(n=10, d=20), _x(1, n=10, d=20)), "more than"),
    (lambda: sim.rdm(_x(n=2)), "at least 3"),
    (lambda: sim.rdm(_x(), "cosine"), "unknown RDM metric"),
    (lambda: sim.rsa(_x(), _x(), "kendall"), "unknown RSA method"),
    (lambda: sim.rbf_cka(_x(), _x(), 0.0), "sigma_frac"),
    (lambda: sim.linear_cka(np.array([["a"], ["b"]]), _x(n=2)), "numeric"),
])
def test_errors_name_the_requirement(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_sources_are_seeded_cached_and_evaluate_applies_a_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path))
    import torch

    from zoo_task_rep_metrics import sources as S
    from zoo_task_rep_metrics import task

    m = S.train("mlp", 0, steps=15)
    files = list((tmp_path / "rep_metrics").glob("*.safetensors"))
    assert len(files) == 1 and not list((tmp_path / "rep_metrics").glob("*.tmp"))
    again = S.train("mlp", 0, steps=15)  # from the cache: identical weights
    assert all(torch.equal(p, q) for p, q in zip(m.state_dict().values(), again.state_dict().values(), strict=True))
    sets = task.activation_sets(kind="mlp", seeds=(0,), steps=15, n=30)
    assert set(sets) == {"trained_s0", "random_s0", "pixels"}
    assert sets["trained_s0"]["act1"].shape == (30, 128) and sets["pixels"]["pixels"].shape == (30, 64)
    assert sets["trained_s0"].labels.shape == (30,)
    x, y = task.probe_data(n=30)
    assert np.array_equal(sets["pixels"]["pixels"], x.flatten(1).numpy()) and np.array_equal(sets["pixels"].labels, y)

    def pair(sets, layer="act1"):
        return {"cka": sim.linear_cka(sets["trained_s0"][layer], sets["random_s0"][layer]), "nested": {"one": 1.0}}

    r = task.evaluate(pair, seeds=(0,), steps=15, n=30, sources=("trained", "random"), layer="act2")
    assert 0 < r.metrics["cka"] < 1 and r.metrics["nested/one"] == 1.0 and r.n == 30
    with pytest.raises(ValueError, match="unknown sources"):
        task.activation_sets(sources=("nope",))
    with pytest.raises(ValueError, match="unknown kind"):
        S.build("rnn", 0)


def test_spearman_rsa_matches_scipy_with_ties():
    from scipy.stats import spearmanr

    x = np.round(_x(4, n=25, d=3), 1)  # coarse values: the Euclidean RDM has tied entries
    y = np.round(_x(5, n=25, d=3), 1)
    iu = np.triu_indices(25, 1)
    a, b = sim.rdm(x, "euclidean")[iu], sim.rdm(y, "euclidean")[iu]
    assert len(np.unique(a)) < len(a)
    assert sim.rsa(x, y, metric="euclidean") == pytest.approx(spearmanr(a, b)[0], abs=1e-12)


def test_shapes_planted_concepts_masks_and_held_out_pairs() -> None:
    from zoo_task_rep_metrics import shapes as S

    d = S.shapes_data(200, seed=3, noise=0.0)
    x, m, c = d["x"], d["masks"], d["concepts"]
    # the object's pixels carry its colour's channels only, the background is exactly 0 without noise
    assert np.all(x.sum(1)[~m] == 0)
    rgb = (x.sum((2, 3)) / m.sum((1, 2))[:, None]) > 0.5
    np.testing.assert_array_equal(rgb, S._RGB[c[:, 1]] > 0)
    # the object sits in its quadrant
    ys, xs = np.nonzero(m[0])
    assert (ys.mean() >= 8) == (c[0, 2] >= 2) and (xs.mean() >= 8) == (c[0, 2] % 2 == 1)
    # a square of radius r covers more pixels than the cross of the same radius
    sq = S._masks(np.array([0, 3]), np.array([7.5, 7.5], np.float32), np.array([7.5, 7.5], np.float32),
                  np.array([3.0, 3.0], np.float32))
    assert sq[0].sum() == 36 and sq[1].sum() < sq[0].sum()
    train, test = S.split_pairs(4, seed=1)
    assert not set(train) & set(test) and len(set(train) | set(test)) == 16
    assert {s for s, _ in train} == {0, 1, 2, 3} and {k for _, k in train} == {0, 1, 2, 3}
    held = S.shapes_data(50, seed=0, pairs=test)["concepts"][:, :2]
    assert {tuple(p) for p in held} <= set(test)
    with pytest.raises(ValueError, match="n_heldout"):
        S.split_pairs(5)
    with pytest.raises(ValueError, match="index outside"):
        S.shapes_data(4, pairs=[(0, 9)])
