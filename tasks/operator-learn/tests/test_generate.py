"""function_generate's samplers and metrics, on cases with known answers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from zoo_task_operator_learn import generate as G

X = G.random_points(30, 1, seed=1)


@pytest.mark.parametrize("kernel,nu", [("rbf", 2.5), ("matern", 0.5), ("matern", 1.5), ("matern", 2.5)])
def test_gp_samples_have_the_kernel_covariance(kernel, nu):
    s = G.gp_sample(kernel, X, 4000, seed=0, lengthscale=0.2, nu=nu)
    assert s.shape == (4000, 30, 1) and s.dtype == np.float32
    k = G.kernel_matrix(X, X, kernel=kernel, lengthscale=0.2, nu=nu)
    assert G.cov_error(s, (np.zeros(30), k)) < 0.06  # ~sqrt(2/n) sampling error of a covariance, times a few
    assert G.mean_error(s, (np.zeros(30), k)) < 0.05
    np.testing.assert_array_equal(s, G.gp_sample(kernel, X, 4000, seed=0, lengthscale=0.2, nu=nu))


def test_matern_kernels():
    r = np.linspace(0, 1, 11)[:, None]
    zero = np.zeros((1, 1))
    np.testing.assert_allclose(G.kernel_matrix(r, zero, kernel="matern", nu=0.5, lengthscale=0.3)[:, 0],
                               np.exp(-r[:, 0] / 0.3))
    rbf = G.kernel_matrix(r, zero, lengthscale=0.3)
    gaps = [np.abs(G.kernel_matrix(r, zero, kernel="matern", nu=nu, lengthscale=0.3) - rbf).max() for nu in (0.5, 1.5, 2.5)]
    assert gaps[0] > gaps[1] > gaps[2]  # smoother Matern kernels approach the RBF
    with pytest.raises(ValueError):
        G.kernel_matrix(r, zero, kernel="matern", nu=2.0)


def test_random_points():
    u = G.random_points(20000, 2, seed=0)
    s = G.random_points(20000, 2, seed=0, dist="skewed")
    assert u.shape == (20000, 2) and u.min() >= 0 and u.max() < 1
    np.testing.assert_allclose(u.mean(0), 0.5, atol=0.01)
    np.testing.assert_allclose(s.mean(0), 1 / 3, atol=0.01)  # E[U^2]


def test_two_samples_of_one_gp_are_close_and_a_scaled_gp_is_far():
    a = G.gp_sample("rbf", X, 500, seed=0)
    b = G.gp_sample("rbf", X, 500, seed=1)
    same, scaled = G.energy_distance(a, b), G.energy_distance(a, 2 * b)
    assert abs(same) < 0.01 and scaled > 0.1
    assert G.marginal_ks(a, b) < 0.1 and G.marginal_ks(a, 2 * b) > 0.15
    assert G.cov_error(a, b) < 0.2 and G.cov_error(a, 2 * b) > 0.6  # 4x the covariance: error 3/4 relative to 4C
    assert G.energy_distance(a, a + 0.5) > 0.1 and G.mean_error(a, a + 0.5) > 0.3


def test_energy_distance_is_unbiased():
    # many independent pairs of the same process: the estimates average to ~0, some negative
    vals = [G.energy_distance(G.gp_sample("rbf", X, 40, seed=2 * i), G.gp_sample("rbf", X, 40, seed=2 * i + 1))
            for i in range(30)]
    assert min(vals) < 0 < max(vals)
    assert abs(np.mean(vals)) < 3 * np.std(vals) / np.sqrt(len(vals))


def test_ks_matches_scipy_with_ties():
    rng = np.random.default_rng(0)
    p = rng.integers(0, 5, (30, 4)).astype(float)  # Darcy-like discrete values: many ties
    q = rng.integers(0, 6, (41, 4)).astype(float)
    np.testing.assert_allclose(G.ks_statistics(p, q), [ks_2samp(p[:, i], q[:, i]).statistic for i in range(4)])
    c1, c2 = rng.standard_normal((25, 3)), rng.standard_normal((33, 3)) + 0.3
    np.testing.assert_allclose(G.ks_statistics(c1, c2), [ks_2samp(c1[:, i], c2[:, i]).statistic for i in range(3)])


def test_warped_process_moments_and_non_gaussianity():
    w = G.warped_sample(X, 4000, seed=2)
    moments = G.warped_moments(X)
    assert G.cov_error(w, moments) < 0.15 and G.mean_error(w, moments) < 0.05
    # a Gaussian with the same mean and covariance matches the moments but not the marginals
    chol = np.linalg.cholesky(moments[1] + 1e-9 * np.eye(30))
    gauss = np.random.default_rng(0).standard_normal((4000, 30)) @ chol.T
    assert G.cov_error(gauss, moments) < 0.15
    assert G.marginal_ks(w, gauss) > 0.1 > 3 * G.marginal_ks(w, G.warped_sample(X, 4000, seed=3))


def test_posterior_interpolates_noise_free_observations():
    obs = G.random_points(8, 1, seed=3)
    y = G.gp_sample("matern", obs, 1, seed=4, nu=1.5)[0].astype(np.float64)
    mean, cov = G.gp_posterior(obs, y, obs, kernel="matern", nu=1.5)
    np.testing.assert_allclose(mean, y, atol=1e-5)
    assert np.abs(np.diag(cov)).max() < 1e-5
    query = np.linspace(0, 1, 50)[:, None]
    mean_q, cov_q = G.gp_posterior(obs, y, query, kernel="matern", nu=1.5)
    assert mean_q.shape == (50, 1) and np.linalg.eigvalsh(cov_q).min() > -1e-8
    assert np.all(np.diag(cov_q) <= 1 + 1e-9)  # conditioning only reduces the variance
    # one observation: the closed form k(q, o) y / k(o, o)
    m1, c1 = G.gp_posterior(obs[:1], y[:1], query, noise=0.1)
    kq = G.kernel_matrix(query, obs[:1])
    np.testing.assert_allclose(m1, kq * y[:1, 0] / 1.1, atol=1e-10)
    np.testing.assert_allclose(np.diag(c1), 1 - kq[:, 0] ** 2 / 1.1, atol=1e-10)
