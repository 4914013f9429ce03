"""STL semantics on sampled trajectories: the random formula generator, the trajectory base measure, quantitative
robustness and the STL kernel, after Bortolussi, Gallo, Kretinsky, Nenzi, "Learning model checking and the kernel
trick for signal temporal logic on stochastic processes" (TACAS 2022, arXiv:2201.09928) as used by Saveri et al.
(stl2vec) and Candussio et al. (embedding inversion).

**Formulae** (``sample_formulae``): the root is an operator; every other node is a leaf (an atom) with probability
``leaf_prob`` (0.5 in the kernel paper, 0.4 for the anchor set of stl2vec), else one of not / and / or / eventually /
always / until with probabilities ``inner_probs`` (uniform); an atom picks a variable and a direction uniformly and
a threshold from N(0, 1) (here rounded to the vocabulary's 0.1 grid); a temporal operator is unbounded ``[a, inf)``
with probability ``unbound_prob`` (0.1), else ``a`` uniform in 0..max_range-1 and ``b = a + `` uniform in
1..max_range (``max_range`` 10 as in the papers' generator defaults). Two additions of ours, to keep token sequences
bounded: nodes at ``max_depth`` are leaves, and formulae over ``max_tokens`` tokens are redrawn.

**Trajectories** (``sample_trajectories``): the piecewise-linear base measure mu0 of the kernel paper. Per
trajectory and variable: the initial value ~ N(mu0, sigma0^2); the total variation K = (mu1 + sigma1 Z)^2; the
``points - 1`` increments are the spacings of sorted uniforms on [0, 1] (so they sum to 1) times K, with a sign that
starts +/- with probability q0 and flips at each step with probability q. Defaults mu0 = mu1 = 0, sigma0 = sigma1 =
1, q = 0.1, q0 = 0.5, ``points`` samples at unit time steps. Not Brownian: piecewise linear with random kinks.

**Robustness** (``robustness``): the standard quantitative semantics (Donze and Maler 2010) in discrete time:
``x_i >= c -> x_i(t) - c``, ``x_i <= c -> c - x_i(t)``, not -> minus, and -> min, or -> max,
``eventually[a,b] f -> max_{t' in [t+a, t+b]} rho(f, t')``, always -> min, ``f until[a,b] g ->
max_{t' in [t+a, t+b]} min(rho(g, t'), min_{t'' in [t, t']} rho(f, t''))``. Past the last sample the signal is held
at its last value (so windows past the horizon are well defined); ``[a, inf)`` runs to the horizon.

**Kernel** (``kernel``): k0(phi, psi) = E_mu0[rho(phi, xi, 0) rho(psi, xi, 0)] estimated on M sampled
trajectories; normalised k = k0(phi, psi) / sqrt(k0(phi, phi) k0(psi, psi)) (the cosine of the robustness vectors,
in [-1, 1], k(phi, phi) = 1), and the paper's Gaussian version exp(-(k(phi,phi) + k(psi,psi) - 2 k(phi,psi)) /
sigma^2) = exp(-2 (1 - k) / sigma^2) with ``sigma2`` 0.2. The two are monotone in each other, so every rank
statistic (Spearman) is the same for both. The papers' optional time integration of robustness is not implemented.

>>> fs = sample_formulae(3, seed=0)
>>> xs = sample_trajectories(100, seed=0)
>>> r = robustness_matrix(fs, xs)
>>> r.shape, bool(np.allclose(np.diag(kernel(r, r)), 1.0))
((3, 100), True)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .syntax import MAX_VARS, OPS, Formula, size, threshold

LEAF_PROB = 0.5
ANCHOR_LEAF_PROB = 0.4
MAX_RANGE = 10
UNBOUND_PROB = 0.1
MAX_DEPTH = 4
MAX_TOKENS = 40
POINTS = 50
SIGMA2 = 0.2
MEASURE = {"mu0": 0.0, "sigma0": 1.0, "mu1": 0.0, "sigma1": 1.0, "q": 0.1, "q0": 0.5}


def _interval(rng: np.random.Generator, max_range: int, unbound_prob: float) -> tuple[int, int | None]:
    a = int(rng.integers(0, max_range))
    if rng.random() < unbound_prob:
        return a, None
    return a, a + int(rng.integers(1, max_range + 1))


def _node(rng: np.random.Generator, d: int, *, n_vars: int, leaf_prob: float, inner_probs: np.ndarray,
          max_range: int, unbound_prob: float, max_depth: int) -> Formula:
    if d >= max_depth or (d > 0 and rng.random() < leaf_prob):
        return ("atom", int(rng.integers(n_vars)), (">=", "<=")[int(rng.integers(2))], threshold(rng.normal()))
    op = OPS[int(rng.choice(len(OPS), p=inner_probs))]
    kw = dict(n_vars=n_vars, leaf_prob=leaf_prob, inner_probs=inner_probs, max_range=max_range,
              unbound_prob=unbound_prob, max_depth=max_depth)
    child = lambda: _node(rng, d + 1, **kw)  # noqa: E731
    if op == "not":
        return ("not", child())
    if op in ("and", "or"):
        return (op, child(), child())
    a, b = _interval(rng, max_range, unbound_prob)
    return (op, a, b, child()) if op != "until" else (op, a, b, child(), child())


def sample_formulae(n: int, *, seed: int, n_vars: int = 2, leaf_prob: float = LEAF_PROB,
                    inner_probs: Sequence[float] | None = None, max_range: int = MAX_RANGE,
                    unbound_prob: float = UNBOUND_PROB, max_depth: int = MAX_DEPTH, max_tokens: int = MAX_TOKENS,
                    distinct: bool = True) -> list[Formula]:
    """``n`` random formulae (see the module docstring), fixed by ``seed``; ``distinct`` drops repeats."""
    if not 1 <= n_vars <= MAX_VARS:
        raise ValueError(f"n_vars={n_vars}: the vocabulary has variables x0..x{MAX_VARS - 1}")
    p = np.full(len(OPS), 1 / len(OPS)) if inner_probs is None else np.asarray(inner_probs, dtype=float)
    if p.shape != (len(OPS),) or abs(p.sum() - 1) > 1e-9:
        raise ValueError(f"inner_probs must be {len(OPS)} probabilities (for {OPS}) summing to 1, got {inner_probs}")
    rng = np.random.default_rng(seed)
    out: list[Formula] = []
    seen: set[Formula] = set()
    for _ in range(200 * n):
        f = _node(rng, 0, n_vars=n_vars, leaf_prob=leaf_prob, inner_probs=p, max_range=max_range,
                  unbound_prob=unbound_prob, max_depth=max_depth)
        if size(f) > max_tokens or (distinct and f in seen):
            continue
        seen.add(f)
        out.append(f)
        if len(out) == n:
            return out
    raise RuntimeError(f"drew only {len(out)} of {n} distinct formulae of <= {max_tokens} tokens; raise max_tokens")


def sample_trajectories(n: int, *, seed: int, n_vars: int = 2, points: int = POINTS, mu0: float = MEASURE["mu0"],
                        sigma0: float = MEASURE["sigma0"], mu1: float = MEASURE["mu1"], sigma1: float = MEASURE["sigma1"],
                        q: float = MEASURE["q"], q0: float = MEASURE["q0"]) -> np.ndarray:
    """``(n, n_vars, points)`` trajectories of the base measure mu0 (see the module docstring), fixed by ``seed``."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.random((n, n_vars, points - 1)), axis=-1)
    spacing = np.diff(cuts, axis=-1, prepend=0.0)  # points - 1 increments; with the last gap they would sum to 1
    spacing[..., -1] += 1.0 - cuts[..., -1]
    first = np.where(rng.random((n, n_vars, 1)) < q0, 1.0, -1.0)
    flips = np.where(rng.random((n, n_vars, points - 2)) < q, -1.0, 1.0)
    sign = np.concatenate([first, first * np.cumprod(flips, axis=-1)], axis=-1)
    total_variation = (mu1 + sigma1 * rng.normal(size=(n, n_vars, 1))) ** 2
    start = mu0 + sigma0 * rng.normal(size=(n, n_vars, 1))
    return np.concatenate([start, start + np.cumsum(sign * spacing * total_variation, axis=-1)], axis=-1)


def _shift(r: np.ndarray, s: int) -> np.ndarray:
    """``r(t + s)`` for every t, the last sample held past the horizon."""
    if s == 0:
        return r
    s = min(s, r.shape[-1] - 1)
    return np.concatenate([r[..., s:], np.repeat(r[..., -1:], s, axis=-1)], axis=-1)


def _window(r: np.ndarray, a: int, b: int | None, reduce: np.ufunc) -> np.ndarray:
    """``reduce`` of ``r`` over ``[t + a, t + b]`` for every t (to the horizon when ``b`` is None)."""
    n = r.shape[-1]
    if b is None or b >= n - 1:  # the window reaches the held tail: a suffix reduction
        return _shift(reduce.accumulate(r[..., ::-1], axis=-1)[..., ::-1], a)
    padded = np.concatenate([r, np.repeat(r[..., -1:], b, axis=-1)], axis=-1)
    out = padded[..., a:a + n]
    for s in range(a + 1, b + 1):
        out = reduce(out, padded[..., s:s + n])
    return out


def robustness(f: Formula, x: np.ndarray) -> np.ndarray:
    """Robustness of ``f`` at every time step: ``(N, points)`` for trajectories ``x`` of shape ``(N, vars, points)``.

    >>> x = np.array([[[0.0, 1.0, 3.0]]])          # one trajectory, one variable
    >>> robustness(("eventually", 0, 1, ("atom", 0, ">=", 2.0)), x)[0].tolist()
    [-1.0, 1.0, 1.0]
    """
    op = f[0]
    if op == "atom":
        if f[1] >= x.shape[1]:
            raise ValueError(f"formula uses x{f[1]} but the trajectories have {x.shape[1]} variables")
        return x[:, f[1]] - f[3] if f[2] == ">=" else f[3] - x[:, f[1]]
    if op == "not":
        return -robustness(f[1], x)
    if op in ("and", "or"):
        return (np.minimum if op == "and" else np.maximum)(robustness(f[1], x), robustness(f[2], x))
    if op == "eventually":
        return _window(robustness(f[3], x), f[1], f[2], np.maximum)
    if op == "always":
        return _window(robustness(f[3], x), f[1], f[2], np.minimum)
    if op == "until":
        left, right = robustness(f[3], x), robustness(f[4], x)
        n = x.shape[-1]
        b = n - 1 if f[2] is None else min(f[2], n - 1)  # past the horizon both sides are held: nothing changes
        a = min(f[1], b)
        pl = np.concatenate([left, np.repeat(left[..., -1:], b, axis=-1)], axis=-1)
        pr = np.concatenate([right, np.repeat(right[..., -1:], b, axis=-1)], axis=-1)
        hold, out = left, None
        for s in range(b + 1):
            if s:
                hold = np.minimum(hold, pl[..., s:s + n])  # min of the left side over [t, t + s]
            if s >= a:
                here = np.minimum(pr[..., s:s + n], hold)
                out = here if out is None else np.maximum(out, here)
        return out
    raise ValueError(f"unknown operator {op!r}")


def robustness_matrix(formulae: Sequence[Formula], x: np.ndarray) -> np.ndarray:
    """``(len(formulae), N)``: robustness at time 0 of each formula on each trajectory."""
    return np.stack([robustness(f, x)[:, 0] for f in formulae]) if formulae else np.zeros((0, x.shape[0]))


def kernel(r1: np.ndarray, r2: np.ndarray, *, exp: bool = False, sigma2: float = SIGMA2) -> np.ndarray:
    """The STL kernel between formulae given by their robustness vectors ``(n1, M)`` and ``(n2, M)`` on the same
    trajectories: normalised (cosine, ``exp=False``) or the paper's Gaussian of the normalised one (``exp=True``)."""
    k0 = r1 @ r2.T / r1.shape[1]
    n1 = np.sqrt(np.maximum((r1 * r1).mean(1), 1e-300))
    n2 = np.sqrt(np.maximum((r2 * r2).mean(1), 1e-300))
    k = np.clip(k0 / n1[:, None] / n2[None, :], -1.0, 1.0)
    return np.exp(-2.0 * (1.0 - k) / sigma2) if exp else k
