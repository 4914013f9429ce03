"""The attention-based resonator network (Yeung, Poduval & Imani 2024, "Self-Attention Based Semantic Decomposition in
Vector Symbolic Architectures", arXiv:2403.13218).

The classic resonator (the task's ``classic_resonator``) cleans each factor's unbound estimate with the
outer-product weights and a sign, ``x_f <- sign(X_f X_f^T q_f)`` with ``q_f = s * prod_{g != f} x_g``. The attention
variant replaces that cleanup with one step of a modern (log-sum-exp energy) Hopfield network, i.e. attention over the
codebook (the paper's update rule, its Section on attention-based resonator networks):

    x_f <- X_f^T softmax(beta * X_f q_f / D)

The new state is a convex combination of codewords, so its norm is bounded by that of a codeword (the
"norm-bounded states" of the log-sum-exp energy); large ``beta`` turns the update into a hard nearest-codeword lookup
(:func:`attention_update` with ``beta=inf``). States start at the codebook's mean (softmax of equal scores);
factors update in turn, each with the others' newest states, as the classic baseline does.

Deviations and what is not from the paper: only the abstract and the catalog entry could be read (the paper's text
was not reachable here), so the similarity scale (dot product / D) follows the update as third-party descriptions
quote it, and ``beta`` is ours: chosen on validation problems (seeds 100, 101; D=1024, F=3, M in {16, 64}) from
{500, 1000, 2000, 4000} before the recorded run. The stopping rule is ours: a problem stops when no attention weight
moves by more than ``tol`` in a sweep (the classic baseline stops at an exact fixed point of its bipolar states).
``normalize=True`` (not the paper's form, reported beside it) rescales each state to the codeword norm sqrt(D) so
that products of superpositions do not shrink the scores; its ``beta`` was chosen the same way from {5, 10, 15, 20}.

>>> from zoo_task_vsa_bench.data import factorization_problems
>>> p = factorization_problems(n=8, factors=3, codebook_size=8, dim=512, seed=0)
>>> idx, its = AttentionResonator().factorize(p.composite, list(p.codebooks), iters=50)
>>> bool((idx == p.indices).all())
True
"""
from __future__ import annotations

import math

import torch

from zoo_task_vsa_bench.baselines import decode_states, unbind_others
from zoo_task_vsa_bench.contract import Factorizer

PAPER = {"beta": 500.0, "normalize": False, "tol": 1e-4}
CPU = dict(PAPER)  # nothing to shrink: the method has no weights and runs in seconds on one core
NORMALIZED = {"beta": 10.0, "normalize": True, "tol": 1e-4}
PRESETS = {"paper": PAPER, "cpu": CPU, "normalized": NORMALIZED}


def attention_update(q: torch.Tensor, codebook: torch.Tensor, beta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention cleanup: weights ``softmax(beta * codebook q / D)`` (B, M) and the state ``weights @ codebook``
    (B, D). ``beta = inf`` gives the hard lookup: all weight on the most similar codeword.

    >>> cb = torch.tensor([[1., 1., 1., 1.], [1., -1., 1., -1.]])
    >>> attention_update(torch.tensor([[0.9, 0.8, 1.0, 0.7]]), cb, math.inf)[0].tolist()
    [[1.0, 1.0, 1.0, 1.0]]
    """
    scores = q @ codebook.T / codebook.shape[1]
    if math.isinf(beta):
        weights = torch.nn.functional.one_hot(scores.argmax(dim=1), codebook.shape[0]).to(q.dtype)
    else:
        weights = torch.softmax(beta * scores, dim=1)
    return weights @ codebook, weights


class AttentionResonator(Factorizer):
    """Resonator network with attention (modern Hopfield) cleanup; ``factorize`` follows the vsa_bench contract."""

    def __init__(self, beta: float = PAPER["beta"], normalize: bool = PAPER["normalize"], tol: float = PAPER["tol"]) -> None:
        super().__init__()
        if not beta > 0:
            raise ValueError(f"beta must be > 0 (inf for the hard lookup), got {beta}")
        self.beta, self.normalize, self.tol = float(beta), bool(normalize), float(tol)

    def _bound(self, x: torch.Tensor) -> torch.Tensor:
        if not self.normalize:
            return x
        return x * (math.sqrt(x.shape[1]) / x.norm(dim=1, keepdim=True).clamp_min(1e-12))

    def factorize(self, s: torch.Tensor, codebooks: list[torch.Tensor], iters: int) -> tuple[torch.Tensor, torch.Tensor]:
        if iters < 1:
            raise ValueError(f"iters must be >= 1, got {iters}")
        b = s.shape[0]
        weights = [torch.full((b, cb.shape[0]), 1.0 / cb.shape[0], dtype=s.dtype, device=s.device) for cb in codebooks]
        states = [self._bound(w @ cb) for w, cb in zip(weights, codebooks, strict=True)]
        done = torch.zeros(b, dtype=torch.bool, device=s.device)
        used = torch.full((b,), iters, dtype=torch.long, device=s.device)
        for t in range(1, iters + 1):
            moved = torch.zeros(b, dtype=s.dtype, device=s.device)
            for f, cb in enumerate(codebooks):
                state, w = attention_update(unbind_others(s, states, f), cb, self.beta)
                moved = torch.maximum(moved, (w - weights[f]).abs().amax(dim=1))
                weights[f] = torch.where(done[:, None], weights[f], w)
                states[f] = torch.where(done[:, None], states[f], self._bound(state))
            fixed = (moved <= self.tol) & ~done
            used[fixed] = t
            done |= fixed
            if bool(done.all()):
                break
        return decode_states(states, codebooks), used


def attn_resonator(preset: str = "paper", **overrides: float) -> AttentionResonator:
    """The attention resonator with a preset's settings (``paper``/``cpu``: the paper's form; ``normalized``: states
    rescaled to the codeword norm), overridden by keyword (``beta``, ``normalize``, ``tol``)."""
    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r}; choose from {', '.join(PRESETS)}")
    return AttentionResonator(**{**PRESETS[preset], **overrides})
