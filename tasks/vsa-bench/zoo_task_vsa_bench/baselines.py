"""The baselines of vsa_bench: the classic resonator network (factorize), the MAP-I sum bundle (membership and
intersection) and the unweighted fractional-power function encoding (invariance).

>>> from zoo_task_vsa_bench.data import factorization_problems
>>> p = factorization_problems(n=8, factors=3, codebook_size=8, dim=512, seed=0)
>>> idx, its = ClassicResonator().factorize(p.composite, list(p.codebooks), iters=50)
>>> bool((idx == p.indices).all()), int(its.max()) < 50
(True, True)
"""
from __future__ import annotations

import torch

from .contract import Factorizer, FunctionEncoder, SetMemory
from .data import bipolar

BASELINES = ("classic_resonator", "map_i_bundle", "fpe_sum")


def sign0(x: torch.Tensor) -> torch.Tensor:
    """Bipolar sign with ties (exact zeros, e.g. a superposition of an even number of codewords) sent to +1."""
    return torch.where(x >= 0, 1.0, -1.0).to(x.dtype)


def unbind_others(s: torch.Tensor, states: list[torch.Tensor], f: int) -> torch.Tensor:
    """``s * prod_{g != f} states[g]``: in a MAP VSA bipolar vectors are their own inverses, so binding the composite
    with every other factor's estimate leaves (an estimate of) factor ``f``."""
    q = s
    for g, x in enumerate(states):
        if g != f:
            q = q * x
    return q


def decode_states(states: list[torch.Tensor], codebooks: list[torch.Tensor]) -> torch.Tensor:
    """The codeword most similar to each factor's state up to sign, (B, F) long: bipolar factors are defined up to
    an even number of sign flips ((-x_1) * (-x_2) * x_3 = x_1 * x_2 * x_3), and a network may settle on either."""
    return torch.stack([(x @ cb.T).abs().argmax(dim=1) for x, cb in zip(states, codebooks, strict=True)], dim=1)


class ClassicResonator(Factorizer):
    """The resonator network with outer-product weights (Frady, Kent, Olshausen & Sommer 2020, Neural Computation
    32(12); Kent et al. 2020 for its capacity): ``x_f <- sign(X_f X_f^T (s * prod_{g != f} x_g))``.

    States start at the sign of each codebook's superposition, ``sign(sum_m X_f[m])``. ``update="sequential"``
    (default, as in Kent et al. 2020): factors update in turn within a sweep, each using the others' newest states;
    ``"concurrent"``: every factor updates from the previous sweep's states at once (more prone to limit cycles).
    A problem stops when a whole sweep leaves its bipolar state unchanged (an exact fixed point); ``iterations``
    counts the sweeps run.
    """

    def __init__(self, update: str = "sequential") -> None:
        super().__init__()
        if update not in ("sequential", "concurrent"):
            raise ValueError(f"update={update!r}; choose 'sequential' or 'concurrent'")
        self.update = update

    def factorize(self, s: torch.Tensor, codebooks: list[torch.Tensor], iters: int) -> tuple[torch.Tensor, torch.Tensor]:
        _check_problem(s, codebooks, iters)
        b = s.shape[0]
        states = [sign0(cb.sum(0)).expand(b, -1).clone() for cb in codebooks]
        done = torch.zeros(b, dtype=torch.bool, device=s.device)
        used = torch.full((b,), iters, dtype=torch.long, device=s.device)
        for t in range(1, iters + 1):
            changed = torch.zeros(b, dtype=torch.bool, device=s.device)
            source = states if self.update == "sequential" else list(states)  # concurrent: last sweep's states
            for f, cb in enumerate(codebooks):
                new = sign0((unbind_others(s, source, f) @ cb.T) @ cb)
                changed |= (new != states[f]).any(dim=1)
                states[f] = torch.where(done[:, None], states[f], new)
            fixed = ~changed & ~done
            used[fixed] = t
            done |= fixed
            if bool(done.all()):
                break
        return decode_states(states, codebooks), used


class MapIBundle(SetMemory):
    """MAP-I bundling (integer sums of bipolar atoms): ``memory = sum_{i in S} x_i``; membership
    ``<memory, x_i> >= dim / 2`` (a member contributes ``dim``, every other symbol a zero-mean term of variance
    ``dim``); intersection ``<memory_a, memory_b> / dim`` (the cross terms of distinct atoms average out)."""

    def atoms(self, alphabet: int, dim: int, seed: int) -> torch.Tensor:
        return bipolar((alphabet, dim), torch.Generator().manual_seed(int(seed)))

    def bundle(self, atoms: torch.Tensor, sets: torch.Tensor) -> torch.Tensor:
        return atoms[sets].sum(dim=1)

    def contains(self, atoms: torch.Tensor, memory: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bd,bqd->bq", memory, atoms[items]) >= atoms.shape[1] / 2

    def intersection(self, atoms: torch.Tensor, memory_a: torch.Tensor, memory_b: torch.Tensor) -> torch.Tensor:
        return (memory_a * memory_b).sum(dim=1) / atoms.shape[1]


class FPESum(FunctionEncoder):
    """The plain fractional-power function encoding: ``z = mean_i phi(x_i) * psi(y_i)`` over the valid samples,
    with ``phi(x) = exp(i W_x x)``, ``psi(y) = exp(i W_y y)`` and Gaussian random frequencies (so that
    ``<phi(x), phi(x')> / D`` approximates an RBF kernel of width ``bandwidth_x``). No density weighting: a set of
    samples that is denser somewhere weighs that region more, which is what a density-invariant encoding fixes.

    ``decode`` unbinds ``phi(xq)`` and returns the value on a grid of ``value_grid`` levels in ``value_range`` whose
    code is most similar.
    """

    def __init__(self, dim: int = 2048, d_in: int = 1, d_out: int = 1, bandwidth_x: float = 0.05,
                 bandwidth_y: float = 0.1, value_range: float = 1.5, value_grid: int = 121, seed: int = 0) -> None:
        super().__init__()
        if d_out != 1:
            raise ValueError("fpe_sum decodes scalar outputs only (d_out=1)")
        gen = torch.Generator().manual_seed(int(seed))
        self.dim, self.value_range, self.value_grid = dim, value_range, value_grid
        self.register_buffer("w_x", torch.randn(dim, d_in, generator=gen) / bandwidth_x)
        self.register_buffer("w_y", torch.randn(dim, d_out, generator=gen) / bandwidth_y)

    def _phase(self, v: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.polar(torch.ones(()), v.float() @ w.T)

    def encode(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        terms = self._phase(x, self.w_x) * self._phase(y, self.w_y)
        m = mask.to(terms.real.dtype)[..., None]
        return (terms * m).sum(dim=1) / m.sum(dim=1).clamp_min(1.0)

    def decode(self, z: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        levels = torch.linspace(-self.value_range, self.value_range, self.value_grid, device=z.device)
        codes = self._phase(levels[:, None], self.w_y)  # (L, D)
        unbound = z[:, None, :] * self._phase(xq, self.w_x).conj()  # (B, M, D)
        score = (unbound @ codes.conj().T).real  # (B, M, L)
        return levels[score.argmax(dim=-1)][..., None]


def _check_problem(s: torch.Tensor, codebooks: list[torch.Tensor], iters: int) -> None:
    if s.ndim != 2 or not codebooks or any(cb.ndim != 2 or cb.shape[1] != s.shape[1] for cb in codebooks):
        raise ValueError(f"factorize needs s (B, D) and codebooks of shape (M, D); got s {tuple(s.shape)} and "
                         f"{[tuple(cb.shape) for cb in codebooks]}")
    if iters < 1:
        raise ValueError(f"iters must be >= 1, got {iters}")


def build_baseline(name: str, *, params: int | None = None, data: object = None, seed: int = 0, **options: object):
    """Baseline ``name`` (params and data are accepted for the Task protocol and unused: these have no weights)."""
    if name == "classic_resonator":
        return ClassicResonator(**options)  # type: ignore[arg-type]
    if name == "map_i_bundle":
        return MapIBundle()
    if name == "fpe_sum":
        return FPESum(seed=seed, **options)  # type: ignore[arg-type]
    raise ValueError(f"vsa_bench has no baseline {name!r}; choose from {', '.join(BASELINES)}")

