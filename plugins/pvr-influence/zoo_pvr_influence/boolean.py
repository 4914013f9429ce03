"""Boolean measures of a target f: {-1, +1}^n -> R (Abbe, Bengio, Cornacchia, Kleinberg, Lotfi, Raghu, Zhang 2022,
arXiv:2205.13647), the Boolean PVR functions, and the canonical-holdout prediction. numpy only.

A target is a callable on an (N, n) array of +-1 rows returning N values, or a truth table of length 2^n in ``cube(n)``
order. Definitions (O'Donnell, "Analysis of Boolean Functions"):

- influence of bit i: ``Inf_i(f) = E_x[(f(x) - f(x with bit i flipped))^2] / 4 = sum_{S containing i} fhat(S)^2`` (for
  +-1-valued f the probability that flipping bit i changes f);
- noise stability: ``Stab_rho(f) = E[f(x) f(y)]``, y a rho-correlated copy of x, ``= sum_S rho^|S| fhat(S)^2``;
- canonical holdout of bit k: train on the half cube x_k = +1, test on x_k = -1. A learner with the minimum-degree bias
  the paper puts forward interpolates the training half with the lowest-degree function, which ignores x_k and predicts
  f(x with x_k = +1) on the unseen half; its unseen-half squared error is exactly ``4 Inf_k(f)`` (twice that on the whole
  cube's average: 2 Inf_k), which is ``holdout_prediction``. For a model linear in x with a bias trained by GD from zero
  (bias and w_k receive identical gradients while x_k = +1, so each ends at half the shared coefficient) and a
  degree-1 target, the unseen-half error is exactly ``Inf_k(f)`` (``linear_holdout_prediction``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

EXACT_LIMIT = 16  # bits up to which the cube is enumerated
Target = Callable[[np.ndarray], Any] | np.ndarray


def cube(n: int) -> np.ndarray:
    """All 2^n points of {-1, +1}^n, (2^n, n); row r has x_j = 1 - 2 * bit j of r."""
    if not 1 <= n <= 24:
        raise ValueError(f"cube needs 1 <= n <= 24 bits (got {n})")
    r = np.arange(2**n)[:, None]
    return (1 - 2 * ((r >> np.arange(n)) & 1)).astype(np.float64)


def _eval(f: Target, x: np.ndarray) -> np.ndarray:
    y = np.asarray(f(x), dtype=np.float64).reshape(len(x), -1)
    if y.shape[1] != 1:
        raise ValueError(f"the target returned {y.shape[1]} values per input: a Boolean target returns one")
    if not np.isfinite(y).all():
        raise ValueError("the target returned NaN/inf values")
    return y[:, 0]


def truth_table(f: Target, n: int) -> np.ndarray:
    """f on ``cube(n)`` (2^n values)."""
    if callable(f):
        return _eval(f, cube(n))
    t = np.asarray(f, dtype=np.float64).ravel()
    if t.size != 2**n:
        raise ValueError(f"a truth table for n = {n} bits has 2^n = {2**n} values (got {t.size})")
    if not np.isfinite(t).all():
        raise ValueError("the truth table holds NaN/inf values")
    return t


def fourier(f: Target, n: int) -> np.ndarray:
    """Fourier coefficients fhat(S), indexed by the bit mask of S (fast Walsh-Hadamard transform of the table / 2^n)."""
    a = truth_table(f, n).copy()
    h = 1
    while h < a.size:
        a = a.reshape(-1, 2, h)
        a = np.stack([a[:, 0] + a[:, 1], a[:, 0] - a[:, 1]], axis=1).reshape(-1)
        h *= 2
    return a / a.size


def _check_bit(n: int, i: int) -> None:
    if not 0 <= i < n:
        raise ValueError(f"bit {i} is outside 0..{n - 1} (n = {n})")


def boolean_influence(f: Target, n: int, i: int | None = None, *, samples: int = 20000, seed: int = 0,
                      exact: bool | None = None) -> float | np.ndarray:
    """``Inf_i(f)`` (every bit's, as an (n,) array, when ``i`` is None): by enumerating the cube when ``exact`` (the
    default for n <= 16), else Monte Carlo over ``samples`` uniform points (standard error <= 1/sqrt(samples) for +-1
    targets)."""
    exact = n <= EXACT_LIMIT if exact is None else exact
    bits = range(n) if i is None else [i]
    for b in bits:
        _check_bit(n, b)
    if exact:
        x = cube(n)
        fx = truth_table(f, n)
    else:
        if samples < 2:
            raise ValueError(f"Monte Carlo influence needs samples >= 2 (got {samples})")
        x = np.random.default_rng(seed).choice([-1.0, 1.0], size=(samples, n))
        fx = _eval(f, x) if callable(f) else None
        if fx is None:
            raise ValueError("Monte Carlo influence needs a callable target (a truth table is enumerated exactly)")
    out = []
    for b in bits:
        xf = x.copy()
        xf[:, b] *= -1
        ff = fx[np.arange(len(x)) ^ (1 << b)] if exact else _eval(f, xf)
        out.append(float(np.mean((fx - ff) ** 2) / 4))
    return out[0] if i is not None else np.array(out)


def noise_stability(f: Target, rho: float, n: int | None = None, *, samples: int = 20000, seed: int = 0) -> float:
    """``Stab_rho(f) = E[f(x) f(y)]`` for y rho-correlated with x: exact from the Fourier weights when n <= 16 (or a
    truth table is given), else Monte Carlo. A callable target needs ``n`` (or an ``n`` attribute)."""
    if not -1 <= rho <= 1:
        raise ValueError(f"noise_stability needs -1 <= rho <= 1 (got {rho})")
    n = n if n is not None else getattr(f, "n", None)
    if n is None:
        if callable(f):
            raise ValueError("noise_stability of a callable needs n= (the number of bits)")
        n = int(np.log2(np.asarray(f).size))
    if n <= EXACT_LIMIT or not callable(f):
        coef = fourier(f, n)
        degree = np.array([bin(m).count("1") for m in range(2**n)])
        return float(np.sum(rho**degree * coef**2))
    rng = np.random.default_rng(seed)
    x = rng.choice([-1.0, 1.0], size=(samples, n))
    keep = rng.random((samples, n)) < (1 + rho) / 2
    return float(np.mean(_eval(f, x) * _eval(f, np.where(keep, x, -x))))


def holdout_prediction(f: Target, n: int, k: int) -> float:
    """The Boolean-influence prediction of the unseen-half squared error under canonical holdout of bit k: 4 Inf_k(f)."""
    return 4 * float(boolean_influence(f, n, k))


def linear_holdout_prediction(f: Target, n: int, k: int) -> float:
    """The unseen-half squared error of GD from zero on ``w.x + b`` under canonical holdout of bit k, from the target's
    Fourier coefficients; for a degree-1 target it equals ``Inf_k(f)``. On the training half (x_k = +1) the fit is the
    degree <= 1 projection, with ``b = w_k = (fhat(0) + fhat(k)) / 2`` and ``w_i = fhat(i) + fhat({i, k})``."""
    _check_bit(n, k)
    coef = fourier(f, n)
    w = np.array([coef[1 << i] + (coef[(1 << i) | (1 << k)] if i != k else 0.0) for i in range(n)])
    w[k] = b = (coef[0] + coef[1 << k]) / 2
    x = cube(n)
    unseen = x[:, k] < 0
    pred = x[unseen] @ w + b
    return float(np.mean((truth_table(f, n)[unseen] - pred) ** 2))


class PVR:
    """A Boolean pointer value retrieval function: the first ``pointer_bits`` bits (read as a binary number j) point to
    a window of ``window`` consecutive value bits starting at value bit j (cyclically, among the 2^pointer_bits value
    bits), which ``aggregation`` ("majority", "parity", "min", "max") reduces to +-1; ``extra`` irrelevant bits pad
    the input. n = pointer_bits + 2^pointer_bits + extra."""

    AGGREGATIONS = ("majority", "parity", "min", "max")

    def __init__(self, pointer_bits: int = 2, window: int = 3, aggregation: str = "majority", extra: int = 0):
        if pointer_bits < 1 or not 1 <= window <= 2**pointer_bits or extra < 0:
            raise ValueError(f"PVR needs pointer_bits >= 1, 1 <= window <= 2^pointer_bits, extra >= 0 (got "
                             f"{pointer_bits}, {window}, {extra})")
        if aggregation not in self.AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}; one of {self.AGGREGATIONS}")
        if aggregation == "majority" and window % 2 == 0:
            raise ValueError("majority needs an odd window (no ties)")
        self.pointer_bits, self.window, self.aggregation, self.extra = pointer_bits, window, aggregation, extra
        self.values = 2**pointer_bits
        self.n = pointer_bits + self.values + extra

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.n:
            raise ValueError(f"this PVR takes (N, {self.n}) +-1 rows (got {x.shape})")
        p = self.pointer_bits
        j = (((1 - x[:, :p]) / 2).astype(int) << np.arange(p)).sum(1)
        idx = (j[:, None] + np.arange(self.window)) % self.values + p
        win = np.take_along_axis(x, idx, axis=1)
        if self.aggregation == "majority":
            return np.sign(win.sum(1))
        if self.aggregation == "parity":
            return win.prod(1)
        return win.min(1) if self.aggregation == "min" else win.max(1)

    def __repr__(self) -> str:
        return (f"PVR(pointer_bits={self.pointer_bits}, window={self.window}, aggregation={self.aggregation!r}, "
                f"extra={self.extra})")


def pvr_dataset(pvr: PVR, samples: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) for a PVR function: the whole cube when ``samples`` is None, else uniform samples."""
    x = cube(pvr.n) if samples is None else np.random.default_rng(seed).choice([-1.0, 1.0], size=(samples, pvr.n))
    return x, pvr(x)
