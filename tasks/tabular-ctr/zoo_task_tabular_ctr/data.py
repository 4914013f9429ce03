"""The data of tabular_ctr's ``matrix`` mode: a seeded synthetic "which model answers which question" matrix.

Generative model (all drawn from ``seed``):

- ``n_models`` models, each with a general ability ``a_m ~ N(0, 0.5^2)`` and a skill vector ``s_m ~ N(0, I_k)``;
  ``n_specialists`` of them, chosen at random, are **coding specialists**: their skill 0 ("coding") gets ``+SPECIALIST_BOOST``
  (the planted attribute ``coding``; nothing else marks them);
- ``n_questions`` questions, each with a requirement vector ``r_q ~ Dirichlet(0.3 * 1_k)`` (non-negative, sums to 1,
  mostly one or two skills) and a difficulty ``b_q ~ N(0, 1)``;
- correctness ``y[m, q] ~ Bernoulli(sigmoid(a_m + SKILL_SCALE * <s_m, r_q> - b_q))``;
- question features: a noisy random projection of the requirements and the difficulty,
  ``x_q = A z_q + feature_noise * eps``, with ``z_q`` = (r_q, b_q) standardised per column, ``A`` (F, k + 1) ~
  N(0, 1 / (k + 1)) and ``eps ~ N(0, I_F)`` (so every feature's signal has variance about 1);
- split over questions: ``TEST_FRACTION`` of them held out (their features and correctness), the rest for training.

>>> m = correctness_matrix(seed=0)
>>> tuple(m.y.shape), tuple(m.x.shape), int(m.coding.sum()), len(m.test)
((30, 2000), (2000, 24), 15, 600)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

N_MODELS, N_QUESTIONS, N_SKILLS, N_FEATURES, N_SPECIALISTS = 30, 2000, 6, 24, 15
SPECIALIST_BOOST, SKILL_SCALE, FEATURE_NOISE, TEST_FRACTION = 2.0, 2.0, 0.5, 0.3


@dataclass(frozen=True)
class Matrix:
    """``y`` (M, Q) float 0/1, ``p`` (M, Q) true probabilities, ``x`` (Q, F) question features, ``coding`` (M,) bool
    planted attribute, ``skills`` (M, k), ``ability`` (M,), ``requirements`` (Q, k), ``difficulty`` (Q,), ``train`` /
    ``test`` question indices."""

    y: torch.Tensor
    p: torch.Tensor
    x: torch.Tensor
    coding: torch.Tensor
    skills: torch.Tensor
    ability: torch.Tensor
    requirements: torch.Tensor
    difficulty: torch.Tensor
    train: torch.Tensor
    test: torch.Tensor


def correctness_matrix(seed: int, *, n_models: int = N_MODELS, n_questions: int = N_QUESTIONS, n_skills: int = N_SKILLS,
                       n_features: int = N_FEATURES, n_specialists: int = N_SPECIALISTS,
                       feature_noise: float = FEATURE_NOISE) -> Matrix:
    """The seeded matrix of the module docstring."""
    if not 0 <= n_specialists <= n_models:
        raise ValueError(f"tabular_ctr: n_specialists={n_specialists} must lie in [0, n_models={n_models}]")
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 0.5, n_models)
    skills = rng.normal(0, 1, (n_models, n_skills))
    coding = np.zeros(n_models, dtype=bool)
    coding[rng.permutation(n_models)[:n_specialists]] = True
    skills[coding, 0] += SPECIALIST_BOOST
    req = rng.dirichlet(0.3 * np.ones(n_skills), n_questions)
    diff = rng.normal(0, 1, n_questions)
    p = 1 / (1 + np.exp(-(ability[:, None] + SKILL_SCALE * skills @ req.T - diff[None, :])))
    y = (rng.random(p.shape) < p).astype(np.float32)
    z = np.concatenate([req, diff[:, None]], axis=1)
    z = (z - z.mean(0)) / z.std(0)
    a = rng.normal(0, 1 / np.sqrt(n_skills + 1), (n_features, n_skills + 1))
    x = z @ a.T + feature_noise * rng.normal(0, 1, (n_questions, n_features))
    perm = rng.permutation(n_questions)
    n_test = round(TEST_FRACTION * n_questions)
    f = lambda v: torch.as_tensor(v, dtype=torch.float32)  # noqa: E731
    return Matrix(y=f(y), p=f(p), x=f(x), coding=torch.as_tensor(coding), skills=f(skills), ability=f(ability),
                  requirements=f(req), difficulty=f(diff), train=torch.as_tensor(np.sort(perm[n_test:])),
                  test=torch.as_tensor(np.sort(perm[:n_test])))
