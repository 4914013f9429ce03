"""Reference VSAs of the capacity analysis of Clarkson, Ubaru & Yang 2023 ("Capacity Analysis of Vector Symbolic
Architectures", arXiv:2301.10352): MAP-I, MAP-B, two sparse binary VSAs and a Hopfield-network memory, each with the
dimension its membership (and, for MAP-I, intersection) guarantee needs.

All five follow vsa_bench's ``memory`` contract (``zoo_task_vsa_bench.contract.SetMemory``): seeded atoms of an
alphabet, ``bundle`` a batch of sets, ``contains`` with the VSA's own decision rule, ``intersection`` estimating
|A & B|. The VSAs (the paper's Section per VSA):

- **MAP-I**: atoms uniform in {-1, +1}^d, bundle = integer sum, member iff ``<s, x> >= d/2``, intersection
  ``<s_A, s_B> / d`` (the task's ``map_i_bundle``, subclassed here with its bounds).
- **MAP-B**: the same atoms, bundle = sign of the sum (ties broken by a fixed random sign vector), member iff
  ``<b, x> >= d c_k / 2`` with ``c_k = E[x_i . sign(s)]`` for a member of a k-set (computed exactly from the
  binomial law), intersection by inverting Sheppard's formula ``E<b_A, b_B>/d = (2/pi) arcsin(m/k)``.
- **sparse Bloom**: atoms with exactly ``p`` ones among d, bundle = OR (a Bloom filter with p hash functions), member
  iff all of ``x``'s ones are set (no false negatives); intersection from the set-size estimates of the filters of A, B
  and A | B (``n(t) = -(d/p) ln(1 - t/d)`` for t set bits).
- **sparse counting**: the same atoms, bundle = integer sum (a counting Bloom filter), member iff every count on
  ``x``'s ones is >= 1 (same decisions as Bloom), intersection ``(<c_A, c_B> - |A||B| p^2/d) / (p - p^2/d)``.
- **Hopfield**: bipolar atoms stored as ``W = sum_i x_i x_i^T`` (d^2 numbers), member iff ``x^T W x >= k d + d^2/2``
  (``k = trace(W)/d``), intersection ``(<W_A, W_B>_F - |A||B| d) / (d^2 - d)``.

Bounds (``dimension_bound``; ``delta`` is the target probability that one membership query is answered wrongly,
``k`` the set size). The paper's text could not be read here beyond its abstract, so the constants below are derived
in this module by the concentration arguments the abstract names, not copied from the paper's theorems:

- MAP-I, Hoeffding on the ``k d`` independent +-1 terms of the noise: ``P(error) <= exp(-d / (8k))``, so
  ``d >= 8 k ln(1/delta)`` (the paper's O(k log(1/delta)) order).
- MAP-B, Hoeffding on the d coordinates of ``<b, x>``: ``P(error) <= exp(-d c_k^2 / 8)``, ``d >= 8 ln(1/delta) / c_k^2``
  (c_k ~ sqrt(2 / (pi k)), so again O(k log(1/delta))).
- Sparse binary (Bloom) with the best p: the false-positive rate ``(1 - (1 - p/d)^k)^p`` is at most ``delta`` from
  ``d = k log2(1/delta) / ln 2`` on; this is Bloom's expectation formula, not a tail bound, so it is reported, not checked.
- Hopfield: false positives by a Chernoff bound on ``sum_j <x, x_j>^2`` (each term is dominated in the moment
  generating function by ``d`` times a chi-square variable), ``P <= exp(-(k/2)(u - ln(1 + u)))`` with ``u = d / (2k)``;
  false negatives by the lower tail of a sum of non-negative variables (Maurer), ``P <= exp(-(d^2/2 - d)^2 /
  (6 (k - 1) d^2))``; d is the least dimension where both are ``<= delta``: O(sqrt(k log(1/delta))) once d >> k fails,
  i.e. quadratic storage d^2 buys capacity k ~ d^2 / log(1/delta).
- MAP-I intersection (the sketching view: the bundle is a random +-1 sketch of the set's indicator vector):
  the estimate's error has variance ``(|A||B| + m^2 - 2m) / d <= 2 |A||B| / d``; with a Gaussian tail,
  ``P(|error| > eps sqrt(|A||B|)) <= delta`` from ``d = 4 ln(2/delta) / eps^2`` on (the JL inner-product
  guarantee ``d = O(eps^-2 log(1/delta))``).

>>> math.ceil(MapI().dimension_bound(16, 0.01))
590
>>> m = MapI(); atoms = m.atoms(100, 256, seed=0)
>>> bool(m.contains(atoms, m.bundle(atoms, torch.tensor([[1, 2, 3]])), torch.tensor([[2, 50]])).tolist() == [[True, False]])
True
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from zoo_task_vsa_bench.baselines import MapIBundle
from zoo_task_vsa_bench.contract import SetMemory
from zoo_task_vsa_bench.data import bipolar


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def gaussian_tail(z: float) -> float:
    """P(N(0, 1) > z)."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def _least_dim(ok, start: int = 1) -> int:
    """The least integer d >= start with ok(d) (ok monotone): doubling, then bisection."""
    hi = max(start, 1)
    while not ok(hi):
        hi *= 2
    lo = hi // 2
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


class CapacityMixin:
    """What every reference VSA adds to the memory contract: its error bound, the dimension that bound prescribes,
    and the curves drawn beside the measured ones (``reference_curves``, read by vsa_bench's ``--out`` figure)."""

    label = "vsa"

    def error_bound(self, dim: int, set_size: int) -> float:
        raise NotImplementedError

    def dimension_bound(self, set_size: int, delta: float) -> float:
        """The least dimension at which ``error_bound <= delta``."""
        return float(_least_dim(lambda d: self.error_bound(d, set_size) <= delta))

    def reference_curves(self, mode: str, dims: Sequence[int], set_size: int, alphabet: int) -> dict[str, list[float]]:
        if mode != "membership":
            return {}
        return {f"{self.label} bound": [min(1.0, self.error_bound(int(d), set_size)) for d in dims]}


class MapI(CapacityMixin, MapIBundle):
    """MAP-I: integer sums of +-1 atoms (the task's ``map_i_bundle``) with the Hoeffding bound exp(-d / (8k))."""

    label = "MAP-I"

    def error_bound(self, dim: int, set_size: int) -> float:
        return math.exp(-dim / (8 * set_size))

    def dimension_bound(self, set_size: int, delta: float) -> float:
        return 8 * set_size * math.log(1 / delta)

    def intersection_dimension(self, eps: float, delta: float) -> float:
        """``4 ln(2/delta) / eps^2``: the estimate is within ``eps sqrt(|A||B|)`` of |A & B| but with probability delta."""
        return 4 * math.log(2 / delta) / eps ** 2


def member_correlation(set_size: int) -> float:
    """``c_k = E[x_i * sign(sum_{j in S} x_j)]`` per coordinate for a member i of a k-set, ties of the sum broken by a
    fair independent sign: ``P(agree) - P(disagree)`` from the binomial law of the other k - 1 atoms."""
    k = set_size
    agree = 0.0
    for j in range(k):  # j of the other k - 1 coordinates equal x_i's: the sum along x_i is 1 + j - (k - 1 - j)
        p = math.comb(k - 1, j) / 2 ** (k - 1)
        total = 1 + 2 * j - (k - 1)
        agree += p * (1.0 if total > 0 else 0.5 if total == 0 else 0.0)
    return 2 * agree - 1


class MapB(CapacityMixin, SetMemory):
    """MAP-B: the sign of the integer sum (ties broken by a fixed random sign vector); the memory keeps the set's size
    in one extra last column (the decision threshold and the intersection estimate need it)."""

    label = "MAP-B"

    def atoms(self, alphabet: int, dim: int, seed: int) -> torch.Tensor:
        return bipolar((alphabet + 1, dim), _gen(seed))  # the last row breaks ties

    def bundle(self, atoms: torch.Tensor, sets: torch.Tensor) -> torch.Tensor:
        total = atoms[sets].sum(dim=1)
        signs = torch.where(total == 0, atoms[-1].expand_as(total), torch.sign(total))
        return torch.cat([signs, torch.full((sets.shape[0], 1), float(sets.shape[1]))], dim=1)

    def contains(self, atoms: torch.Tensor, memory: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        signs, k = memory[:, :-1], memory[:, -1]
        c = torch.tensor([member_correlation(int(v)) for v in k.tolist()])
        return torch.einsum("bd,bqd->bq", signs, atoms[items]) >= (signs.shape[1] * c / 2)[:, None]

    def intersection(self, atoms: torch.Tensor, memory_a: torch.Tensor, memory_b: torch.Tensor) -> torch.Tensor:
        d = memory_a.shape[1] - 1
        rho = (memory_a[:, :-1] * memory_b[:, :-1]).sum(dim=1) / d
        k = torch.sqrt(memory_a[:, -1] * memory_b[:, -1])
        return k * torch.sin(math.pi / 2 * rho.clamp(-1, 1))

    def error_bound(self, dim: int, set_size: int) -> float:
        return math.exp(-dim * member_correlation(set_size) ** 2 / 8)

    def dimension_bound(self, set_size: int, delta: float) -> float:
        return 8 * math.log(1 / delta) / member_correlation(set_size) ** 2


class _Sparse(CapacityMixin, SetMemory):
    """Sparse binary atoms: exactly ``ones = round(dim ln 2 / set_size)`` ones (at least 1) per atom, the number of
    hash functions that minimises a Bloom filter's false-positive rate for sets of ``set_size``."""

    def __init__(self, set_size: int = 32) -> None:
        super().__init__()
        self.set_size = int(set_size)

    def ones(self, dim: int) -> int:
        return max(1, round(dim * math.log(2) / self.set_size))

    def atoms(self, alphabet: int, dim: int, seed: int) -> torch.Tensor:
        p = self.ones(dim)
        idx = torch.rand(alphabet, dim, generator=_gen(seed)).argsort(dim=1)[:, :p]
        return torch.zeros(alphabet, dim).scatter_(1, idx, 1.0)

    def contains(self, atoms: torch.Tensor, memory: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        x = atoms[items]  # (B, Q, d)
        covered = torch.einsum("bd,bqd->bq", (memory > 0).float(), x)
        return covered >= x.sum(dim=2)

    def error_bound(self, dim: int, set_size: int) -> float:
        p = max(1, round(dim * math.log(2) / set_size))
        return (1 - (1 - p / dim) ** set_size) ** p

    def dimension_bound(self, set_size: int, delta: float) -> float:
        return set_size * math.log2(1 / delta) / math.log(2)


class SparseBloom(_Sparse):
    """Sparse binary VSA with OR bundling: a Bloom filter."""

    label = "sparse Bloom"

    def bundle(self, atoms: torch.Tensor, sets: torch.Tensor) -> torch.Tensor:
        return atoms[sets].amax(dim=1)

    def _size(self, filt: torch.Tensor, p: int) -> torch.Tensor:
        d = filt.shape[1]
        frac = (filt.sum(dim=1) / d).clamp(max=1 - 0.5 / d)
        return -(d / p) * torch.log1p(-frac)

    def intersection(self, atoms: torch.Tensor, memory_a: torch.Tensor, memory_b: torch.Tensor) -> torch.Tensor:
        p = int(atoms[0].sum())
        union = torch.maximum(memory_a, memory_b)
        return self._size(memory_a, p) + self._size(memory_b, p) - self._size(union, p)


class SparseCounting(_Sparse):
    """Sparse binary VSA with integer-sum bundling: a counting Bloom filter."""

    label = "sparse counting"

    def bundle(self, atoms: torch.Tensor, sets: torch.Tensor) -> torch.Tensor:
        return atoms[sets].sum(dim=1)

    def intersection(self, atoms: torch.Tensor, memory_a: torch.Tensor, memory_b: torch.Tensor) -> torch.Tensor:
        d, p = atoms.shape[1], float(atoms[0].sum())
        ka, kb = memory_a.sum(dim=1) / p, memory_b.sum(dim=1) / p
        return ((memory_a * memory_b).sum(dim=1) - ka * kb * p * p / d) / (p - p * p / d)


class Hopfield(CapacityMixin, SetMemory):
    """Hopfield-network memory of a set: ``W = sum_i x_i x_i^T`` of bipolar atoms, flattened to (B, d * d); membership
    by the energy ``x^T W x`` against ``k d + d^2 / 2``."""

    label = "Hopfield"

    def atoms(self, alphabet: int, dim: int, seed: int) -> torch.Tensor:
        return bipolar((alphabet, dim), _gen(seed))

    def bundle(self, atoms: torch.Tensor, sets: torch.Tensor) -> torch.Tensor:
        x = atoms[sets]  # (B, k, d)
        return torch.einsum("bki,bkj->bij", x, x).flatten(1)

    def _w(self, memory: torch.Tensor) -> torch.Tensor:
        d = math.isqrt(memory.shape[1])
        return memory.view(-1, d, d)

    def contains(self, atoms: torch.Tensor, memory: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        w, x = self._w(memory), atoms[items]
        d = w.shape[1]
        energy = torch.einsum("bqi,bij,bqj->bq", x, w, x)
        k = torch.diagonal(w, dim1=1, dim2=2).sum(dim=1) / d
        return energy >= (k * d + d * d / 2)[:, None]

    def intersection(self, atoms: torch.Tensor, memory_a: torch.Tensor, memory_b: torch.Tensor) -> torch.Tensor:
        wa, wb = self._w(memory_a), self._w(memory_b)
        d = wa.shape[1]
        ka = torch.diagonal(wa, dim1=1, dim2=2).sum(dim=1) / d
        kb = torch.diagonal(wb, dim1=1, dim2=2).sum(dim=1) / d
        return ((wa * wb).sum(dim=(1, 2)) - ka * kb * d) / (d * d - d)

    def error_bound(self, dim: int, set_size: int) -> float:
        k, d = set_size, dim
        u = d / (2 * k)
        false_pos = math.exp(-(k / 2) * (u - math.log1p(u)))
        false_neg = 0.0 if k <= 1 else math.exp(-max(d * d / 2 - d, 0.0) ** 2 / (6 * (k - 1) * d * d))
        return max(false_pos, false_neg)


VSAS = {"map_i": MapI, "map_b": MapB, "sparse_bloom": SparseBloom, "sparse_counting": SparseCounting,
        "hopfield": Hopfield}


def vsa_map_i() -> MapI:
    """MAP-I (integer sum of +-1 atoms)."""
    return MapI()


def vsa_map_b() -> MapB:
    """MAP-B (sign of the sum)."""
    return MapB()


def vsa_sparse_bloom(set_size: int = 32) -> SparseBloom:
    """Sparse binary atoms with OR bundling (Bloom filter), ``ln 2 * d / set_size`` ones per atom."""
    return SparseBloom(set_size)


def vsa_sparse_counting(set_size: int = 32) -> SparseCounting:
    """Sparse binary atoms with sum bundling (counting Bloom filter)."""
    return SparseCounting(set_size)


def vsa_hopfield() -> Hopfield:
    """Hopfield-network set memory (d x d outer-product sum)."""
    return Hopfield()
