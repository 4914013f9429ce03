"""Data and metrics of ``function_generate``: Gaussian-process samplers, a non-Gaussian process, exact GP posteriors,
random point sets, and distances between sets of sampled functions (numpy/scipy, float64 inside).

Sample sets are arrays ``(n, N, C)``: ``n`` functions at the same ``N`` points, ``C`` channels (a 2D array is read
as ``(n, N)``, one channel). The metrics compare a model's samples with reference samples or reference moments:

* ``mean_error``: ``||m - m_ref|| / sqrt(||m_ref||^2 + tr C_ref)``: the error of the mean over the reference
  functions' root-mean-square norm (relative L2 that stays defined for a zero-mean reference);
* ``cov_error``: ``||C - C_ref||_F / ||C_ref||_F`` (relative Frobenius);
* ``energy_distance``: the unbiased estimate of ``2 E||X - Y|| - E||X - X'|| - E||Y - Y'||`` with the discrete L2
  norm ``||f|| = sqrt(mean over points and channels of f^2)`` (so it does not grow with ``N``); zero in
  expectation iff the two processes agree at these points, and may be slightly negative;
* ``marginal_ks``: the two-sample Kolmogorov-Smirnov statistic at each point and channel (the same value as
  ``scipy.stats.ks_2samp``, ties included), averaged.
"""

from __future__ import annotations

import numpy as np

KERNELS = ("rbf", "matern")
MATERN_NUS = (0.5, 1.5, 2.5)
SKEW_DESCRIPTION = "U^2 per coordinate (Beta(1/2, 1): dense near 0, positive density up to 1)"


def _rng(seed) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed if isinstance(seed, (list, tuple)) else int(seed)))


def kernel_matrix(x1: np.ndarray, x2: np.ndarray, *, kernel: str = "rbf", lengthscale: float = 0.2,
                  nu: float = 2.5, variance: float = 1.0) -> np.ndarray:
    """``k(x1_i, x2_j)`` for points ``(N1, d)`` and ``(N2, d)``: RBF or Matern with ``nu`` in {1/2, 3/2, 5/2}."""
    x1 = np.asarray(x1, np.float64).reshape(len(x1), -1)
    x2 = np.asarray(x2, np.float64).reshape(len(x2), -1)
    sq = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(-1)
    if kernel == "rbf":
        return variance * np.exp(-0.5 * sq / lengthscale ** 2)
    if kernel != "matern":
        raise ValueError(f"unknown kernel {kernel!r}; expected one of {KERNELS}")
    r = np.sqrt(np.maximum(sq, 0.0)) / lengthscale
    if nu == 0.5:
        return variance * np.exp(-r)
    if nu == 1.5:
        return variance * (1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3) * r)
    if nu == 2.5:
        return variance * (1 + np.sqrt(5) * r + 5 * r ** 2 / 3) * np.exp(-np.sqrt(5) * r)
    raise ValueError(f"matern nu must be one of {MATERN_NUS}, got {nu}")


def _cholesky(cov: np.ndarray, jitter: float) -> np.ndarray:
    # the jitter (relative to the mean variance) is raised tenfold until the factorisation succeeds
    scale = float(np.mean(np.diag(cov))) or 1.0
    eye = np.eye(len(cov))
    for attempt in range(8):
        try:
            return np.linalg.cholesky(cov + jitter * 10 ** attempt * scale * eye)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("covariance not positive definite even with jitter")


def gp_sample(kernel: str = "rbf", coords: np.ndarray | None = None, n: int = 1, *, seed=0, lengthscale: float = 0.2,
              nu: float = 2.5, variance: float = 1.0, jitter: float = 1e-6) -> np.ndarray:
    """``n`` draws ``(n, N, 1)`` float32 of the zero-mean GP with ``kernel`` at ``coords`` ``(N, d)``.

    By Cholesky of the covariance plus ``jitter`` (relative to the variance) on the diagonal.
    """
    if coords is None:
        raise ValueError("gp_sample needs coords (N, d)")
    chol = _cholesky(kernel_matrix(coords, coords, kernel=kernel, lengthscale=lengthscale, nu=nu,
                                   variance=variance), jitter)
    z = _rng(seed).standard_normal((n, len(chol)))
    return (z @ chol.T)[..., None].astype(np.float32)


def warped_sample(coords: np.ndarray, n: int, *, seed=0, kernel: str = "rbf", lengthscale: float = 0.2,
                  nu: float = 2.5, skew: float = 0.5, jitter: float = 1e-6) -> np.ndarray:
    """A non-Gaussian process: ``f = g + skew (g^2 - 1)`` with ``g`` a unit-variance GP; ``(n, N, 1)`` float32.

    Its marginals are skewed (a shifted, scaled chi-square mixed with a normal) and its first two moments are
    known exactly (:func:`warped_moments`), so a model that only matches mean and covariance is told apart by
    ``marginal_ks`` / ``energy_distance`` from one that matches the law.
    """
    g = gp_sample(kernel, coords, n, seed=seed, lengthscale=lengthscale, nu=nu, jitter=jitter).astype(np.float64)
    return (g + skew * (g ** 2 - 1)).astype(np.float32)


def warped_moments(coords: np.ndarray, *, kernel: str = "rbf", lengthscale: float = 0.2, nu: float = 2.5,
                   skew: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``(mean (N,), cov (N, N))`` of :func:`warped_sample`: ``0`` and ``k + 2 skew^2 k^2`` (Isserlis)."""
    k = kernel_matrix(coords, coords, kernel=kernel, lengthscale=lengthscale, nu=nu)
    return np.zeros(len(k)), k + 2 * skew ** 2 * k ** 2


def random_points(n_points: int, d: int = 1, *, seed=0, dist: str = "uniform") -> np.ndarray:
    """``(n_points, d)`` float32 points in ``[0, 1)^d``: ``"uniform"`` or ``"skewed"`` (``U^2`` per coordinate)."""
    u = _rng(seed).random((n_points, d))
    if dist == "uniform":
        return u.astype(np.float32)
    if dist == "skewed":
        return (u ** 2).astype(np.float32)
    raise ValueError(f"dist must be 'uniform' or 'skewed', got {dist!r}")


def gp_posterior(obs_coords: np.ndarray, obs_values: np.ndarray, query_coords: np.ndarray, *, kernel: str = "rbf",
                 lengthscale: float = 0.2, nu: float = 2.5, variance: float = 1.0, noise: float = 0.0,
                 jitter: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """Exact posterior ``(mean (M,) or (M, C), cov (M, M))`` of the zero-mean GP given ``obs_values`` at ``obs_coords``.

    ``noise`` is the observation noise's variance; with ``noise = 0`` (and the tiny ``jitter``) the mean
    interpolates the observations and the variance vanishes there.
    """
    kw = dict(kernel=kernel, lengthscale=lengthscale, nu=nu, variance=variance)
    k_oo = kernel_matrix(obs_coords, obs_coords, **kw) + noise * np.eye(len(obs_coords))
    k_qo = kernel_matrix(query_coords, obs_coords, **kw)
    k_qq = kernel_matrix(query_coords, query_coords, **kw)
    chol = _cholesky(k_oo, jitter)
    from scipy.linalg import cho_solve

    y = np.asarray(obs_values, np.float64)
    mean = k_qo @ cho_solve((chol, True), y)
    cov = k_qq - k_qo @ cho_solve((chol, True), k_qo.T)
    return mean, 0.5 * (cov + cov.T)


# --------------------------------------------------------------------------------------------------------- metrics
def _flat(samples: np.ndarray) -> np.ndarray:
    s = np.asarray(samples, np.float64)
    if s.ndim < 2:
        raise ValueError(f"samples must be (n, N) or (n, N, C), got shape {s.shape}")
    return s.reshape(s.shape[0], -1)


def _moments(ref) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(ref, tuple):
        mean, cov = ref
        return np.asarray(mean, np.float64).ravel(), np.asarray(cov, np.float64)
    f = _flat(ref)
    return f.mean(0), np.cov(f, rowvar=False)


def mean_error(samples: np.ndarray, ref) -> float:
    """Error of the sample mean: ``||m - m_ref|| / sqrt(||m_ref||^2 + tr C_ref)``.

    ``ref``: reference samples (same points) or an exact ``(mean, cov)`` (e.g. :func:`warped_moments`).
    """
    m = _flat(samples).mean(0)
    m_ref, c_ref = _moments(ref)
    return float(np.linalg.norm(m - m_ref) / np.sqrt(m_ref @ m_ref + np.trace(c_ref)))


def cov_error(samples: np.ndarray, ref) -> float:
    """Relative Frobenius error of the sample covariance: ``||C - C_ref||_F / ||C_ref||_F``."""
    c = np.cov(_flat(samples), rowvar=False)
    _, c_ref = _moments(ref)
    return float(np.linalg.norm(c - c_ref) / np.linalg.norm(c_ref))


def _mean_pair_distance(a: np.ndarray, b: np.ndarray | None = None) -> float:
    # mean Euclidean distance between rows (within one set: over distinct pairs, the U-statistic)
    same = b is None
    b = a if same else b
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    d = np.sqrt(np.maximum(sq, 0.0))
    if same:
        n = len(a)
        return float((d.sum() - np.trace(d)) / (n * (n - 1)))
    return float(d.mean())


def energy_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Unbiased energy distance between two sample sets on the same points (discrete L2 norm, see the module)."""
    fx, fy = _flat(x), _flat(y)
    if fx.shape[1] != fy.shape[1]:
        raise ValueError(f"sample sets on different point sets: {fx.shape[1]} vs {fy.shape[1]} values")
    if min(len(fx), len(fy)) < 2:
        raise ValueError("energy_distance needs at least 2 samples in each set")
    scale = 1.0 / np.sqrt(fx.shape[1])
    fx, fy = fx * scale, fy * scale
    return 2 * _mean_pair_distance(fx, fy) - _mean_pair_distance(fx) - _mean_pair_distance(fy)


def ks_statistics(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The two-sample KS statistic at every point and channel, flattened ``(N * C,)`` (vectorised, ties handled)."""
    fx, fy = _flat(x), _flat(y)
    n, m = len(fx), len(fy)
    allv = np.concatenate([fx, fy], axis=0)
    order = np.argsort(allv, axis=0, kind="stable")
    vals = np.take_along_axis(allv, order, axis=0)
    step = np.where(order < n, 1.0 / n, -1.0 / m)
    diff = np.cumsum(step, axis=0)
    # the ECDFs are compared only after the last of equal values (scipy's definition with ties)
    last = np.ones_like(vals, dtype=bool)
    last[:-1] = vals[1:] != vals[:-1]
    return np.where(last, np.abs(diff), 0.0).max(axis=0)


def marginal_ks(x: np.ndarray, y: np.ndarray) -> float:
    """Mean over points (and channels) of the two-sample KS statistic between the marginals of ``x`` and ``y``."""
    return float(ks_statistics(x, y).mean())
