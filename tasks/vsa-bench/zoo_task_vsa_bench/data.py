"""The seeded problems of vsa_bench: bipolar codebooks and composites to factorise, symbol sets to bundle,
and random 1D functions sampled at different densities.

Every generator takes a ``seed`` and draws from its own ``torch.Generator`` (or ``numpy`` ``default_rng``), so the
same arguments give the same tensors in every process and nothing touches the global random state.

>>> p = factorization_problems(n=4, factors=3, codebook_size=8, dim=64, seed=0)
>>> tuple(p.codebooks.shape), tuple(p.indices.shape), tuple(p.composite.shape)
((3, 8, 64), (4, 3), (4, 64))
>>> bool((p.composite == p.codebooks[0, p.indices[:, 0]] * p.codebooks[1, p.indices[:, 1]]
...       * p.codebooks[2, p.indices[:, 2]]).all())
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def bipolar(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Independent uniform +-1 entries (float32): the atomic vectors of a MAP (multiply-add-permute) VSA."""
    return torch.randint(0, 2, shape, generator=gen).float().mul_(2).sub_(1)


def codebooks(factors: int, codebook_size: int, dim: int, *, seed: int) -> torch.Tensor:
    """``factors`` random bipolar codebooks of ``codebook_size`` vectors of dimension ``dim``: (F, M, D) float32."""
    if factors < 1 or codebook_size < 1 or dim < 1:
        raise ValueError(f"codebooks need factors, codebook_size and dim >= 1, got {factors}, {codebook_size}, {dim}")
    return bipolar((factors, codebook_size, dim), _gen(seed))


@dataclass(frozen=True)
class FactorizationData:
    """``composite[b] = prod_f codebooks[f, indices[b, f]]`` (elementwise), then corrupted by ``flip`` / ``noise``."""

    codebooks: torch.Tensor  # (F, M, D) +-1
    indices: torch.Tensor  # (n, F) long: the true factors
    composite: torch.Tensor  # (n, D) float32
    flip: float = 0.0
    noise: float = 0.0


def factorization_problems(n: int, factors: int, codebook_size: int, dim: int, *, seed: int, flip: float = 0.0,
                           noise: float = 0.0) -> FactorizationData:
    """``n`` composites of ``factors`` factors, each drawn uniformly from its codebook.

    ``flip`` is the probability that each entry of the composite changes sign (bit-flip noise); ``noise`` the
    standard deviation of Gaussian noise added afterwards (the composite's entries have magnitude 1).
    """
    if not 0.0 <= flip < 0.5:
        raise ValueError(f"flip is a sign-flip probability in [0, 0.5), got {flip}")
    if noise < 0:
        raise ValueError(f"noise is a standard deviation >= 0, got {noise}")
    cb = codebooks(factors, codebook_size, dim, seed=seed)
    gen = _gen(seed + 1_000_003)
    idx = torch.randint(0, codebook_size, (n, factors), generator=gen)
    s = torch.ones(n, dim)
    for f in range(factors):
        s = s * cb[f, idx[:, f]]
    if flip > 0:
        s = torch.where(torch.rand(n, dim, generator=gen) < flip, -s, s)
    if noise > 0:
        s = s + noise * torch.randn(n, dim, generator=gen)
    return FactorizationData(cb, idx, s, flip, noise)


@dataclass(frozen=True)
class SetData:
    """Pairs of symbol sets from an alphabet ``range(alphabet)``, with member and non-member probes.

    ``sets_a``/``sets_b``: (n, k) long, distinct symbols per row; ``overlap``: (n,) the true |A & B|;
    ``members``: (n, q) symbols of A; ``others``: (n, q) symbols not in A.
    """

    alphabet: int
    sets_a: torch.Tensor
    sets_b: torch.Tensor
    overlap: torch.Tensor
    members: torch.Tensor
    others: torch.Tensor


def symbol_sets(n: int, set_size: int, alphabet: int, *, seed: int, probes: int = 16) -> SetData:
    """``n`` pairs of sets of ``set_size`` distinct symbols; the overlap of each pair is uniform in 0..set_size.

    Non-member probes are drawn outside both sets, so ``overlap`` is the only shared structure.
    """
    if alphabet < 2 * set_size + probes:
        raise ValueError(f"alphabet={alphabet} is too small for two sets of {set_size} and {probes} outside probes; "
                         f"use alphabet >= {2 * set_size + probes}")
    rng = np.random.default_rng(seed)
    a, b, overlap, members, others = [], [], [], [], []
    for _ in range(n):
        perm = rng.permutation(alphabet)
        k = int(rng.integers(0, set_size + 1))
        sa = perm[:set_size]
        sb = np.concatenate([sa[:k], perm[set_size:2 * set_size - k]])
        rest = perm[2 * set_size:]
        a.append(sa), b.append(rng.permutation(sb)), overlap.append(k)
        members.append(rng.choice(sa, probes, replace=probes > set_size))
        others.append(rng.choice(rest, probes, replace=False))
    t = lambda x: torch.as_tensor(np.stack(x), dtype=torch.long)  # noqa: E731
    return SetData(alphabet, t(a), t(b), torch.as_tensor(overlap, dtype=torch.float32), t(members), t(others))


SAMPLINGS = ("uniform", "skewed")


def random_functions(n: int, *, seed: int, harmonics: int = 4) -> np.ndarray:
    """Coefficients (n, 2 * harmonics) of smooth random functions on [0, 1]: Fourier series with 1/k amplitudes."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 2 * harmonics)) / np.tile(np.arange(1, harmonics + 1), 2)


def function_values(coef: np.ndarray, t: np.ndarray) -> np.ndarray:
    """f_i(t) for coefficients (n, 2K) at points t (n, N) or (N,): sum_k a_k sin(2 pi k t) + b_k cos(2 pi k t),
    scaled so that each function's maximum magnitude on a fine grid is 1."""
    k = coef.shape[1] // 2
    freq = 2 * np.pi * np.arange(1, k + 1)

    def raw(tt: np.ndarray) -> np.ndarray:
        tt = np.broadcast_to(tt, (coef.shape[0],) + tt.shape[-1:]) if tt.ndim == 1 else tt
        ph = tt[..., None] * freq
        return (np.sin(ph) * coef[:, None, :k]).sum(-1) + (np.cos(ph) * coef[:, None, k:]).sum(-1)

    scale = np.abs(raw(np.linspace(0, 1, 1001))).max(axis=1, keepdims=True)
    return raw(t) / scale


def sample_points(n: int, n_points: int, *, seed: int, sampling: str = "uniform") -> np.ndarray:
    """Sorted sample locations (n, n_points) in [0, 1]: ``uniform``, or ``skewed`` (t = u^2: density
    1 / (2 sqrt(t)), 5 at t = 0.01 and 0.5 at t = 1)."""
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling={sampling!r}; choose from {SAMPLINGS}")
    u = np.random.default_rng(seed).random((n, n_points))
    return np.sort(u ** 2 if sampling == "skewed" else u, axis=1)
