"""The bespoke evaluation of the SAE plugin: planted smooth concepts, their recovery, and resolution consistency.

No zoo task owns sparse model recovery yet, so the generator and the metrics live here; they could move to a
task (``operator_learn`` or an interpretability task) when a second plugin needs them.

Data follow the paper's sparse functional generative model: each function on [0, 1) (periodic) is a sparse sum
of ``active`` of the K ground-truth concepts, each scaled by an amplitude in [0.5, 1.5] and translated to a random
position (``shift=True``: concepts are translation-invariant patterns; ``shift=False``: concept k sits at its own
fixed position (k + 1/2) / K), plus white noise. Concepts are smooth localized wave packets
``exp(-d^2 / 2w^2) cos(2 pi f d + theta)`` of unit RMS. Everything is drawn at a fine grid and subsampled, so the
same (seed, split, index) is the same function at every resolution dividing ``FINE``.

Concept recovery is the mean over the K true concepts of the largest cosine between the concept and any decoder atom
(at any circular shift when ``shift=True``: a translated concept is the same concept).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["ConceptData", "concept_bank", "sparse_concepts", "recovery", "fit", "FINE"]

FINE = 512  # the grid every function is drawn on (resolutions must divide it)
SPLIT_OFFSET = {"train": 0, "test": 10_000}


@dataclass
class ConceptData:
    """``x`` (n, 1, N) float32 functions; ``dictionary`` (K, 1, N) the true concepts (centred at 0 when shifted)."""

    x: torch.Tensor
    dictionary: torch.Tensor
    coefficients: np.ndarray  # (n, K) amplitudes (0 when inactive)
    positions: np.ndarray  # (n, K) where each concept sits


def _grid(resolution: int) -> np.ndarray:
    if FINE % resolution:
        raise ValueError(f"resolution {resolution} must divide the fine grid {FINE}")
    return np.arange(resolution) / resolution


def _wrap(d: np.ndarray) -> np.ndarray:
    return (d + 0.5) % 1.0 - 0.5


def concept_bank(k: int, *, seed: int = 0) -> np.ndarray:
    """The (k, 3) shape parameters [width, frequency, phase] of the true concepts (fixed by ``seed``)."""
    rng = np.random.default_rng([seed, 4501])
    return np.stack([rng.uniform(0.03, 0.07, k), rng.uniform(0.0, 8.0, k), rng.uniform(0, 2 * math.pi, k)], 1)


def _concept(params: np.ndarray, d: np.ndarray) -> np.ndarray:
    w, f, theta = params
    fine_d = _wrap(np.arange(FINE) / FINE)
    shape = lambda t: np.exp(-t ** 2 / (2 * w ** 2)) * np.cos(2 * math.pi * f * t + theta)  # noqa: E731
    return shape(d) / np.sqrt(np.mean(shape(fine_d) ** 2))


def sparse_concepts(n: int, *, resolution: int = 64, seed: int = 0, split: str = "train", concepts: int = 8,
                    active: int = 2, noise: float = 0.05, shift: bool = True, dictionary_seed: int = 0) -> ConceptData:
    """``n`` functions at ``resolution`` points, each a sparse combination of planted concepts plus noise.

    >>> d = sparse_concepts(3, resolution=32)
    >>> tuple(d.x.shape), tuple(d.dictionary.shape), int((d.coefficients > 0).sum())
    ((3, 1, 32), (8, 1, 32), 6)
    """
    t, bank = _grid(resolution), concept_bank(concepts, seed=dictionary_seed)
    rng = np.random.default_rng([seed, SPLIT_OFFSET[split], 4502])
    coef, pos = np.zeros((n, concepts)), np.zeros((n, concepts))
    x = np.zeros((n, resolution))
    fixed = (np.arange(concepts) + 0.5) / concepts
    for i in range(n):
        for k in rng.choice(concepts, active, replace=False):
            coef[i, k] = rng.uniform(0.5, 1.5)
            pos[i, k] = rng.uniform() if shift else fixed[k]
            x[i] += coef[i, k] * _concept(bank[k], _wrap(t - pos[i, k]))
    fine_noise = rng.standard_normal((n, FINE))
    x += noise * fine_noise[:, :: FINE // resolution]
    centre = np.zeros(concepts) if shift else fixed
    dictionary = np.stack([_concept(bank[k], _wrap(t - centre[k])) for k in range(concepts)])
    return ConceptData(torch.tensor(x[:, None], dtype=torch.float32),
                       torch.tensor(dictionary[:, None], dtype=torch.float32), coef, pos)


def recovery(atoms: torch.Tensor, truth: torch.Tensor, *, shift: bool = True) -> torch.Tensor:
    """For each true concept (K, C, N), the largest cosine to any atom (J, C, N), over circular shifts if ``shift``.

    >>> truth = torch.randn(3, 1, 16)
    >>> bool(recovery(torch.roll(truth, 5, -1), truth).min() > 0.999), bool(recovery(torch.roll(truth, 5, -1), truth,
    ...                                                                         shift=False).min() > 0.999)
    (True, False)
    """
    a = atoms / atoms.flatten(1).norm(dim=1).clamp_min(1e-12)[:, None, None]
    b = truth / truth.flatten(1).norm(dim=1).clamp_min(1e-12)[:, None, None]
    if not shift:
        return torch.einsum("jcn,kcn->kj", a, b).amax(1)
    n = a.shape[-1]
    # circular cross-correlation of every atom with every concept, summed over channels
    corr = torch.fft.irfft(torch.einsum("jcm,kcm->kjm", torch.fft.rfft(a), torch.fft.rfft(b).conj()), n=n)
    return corr.flatten(1).amax(1)


def fit(model: torch.nn.Module, data: ConceptData, *, steps: int, seed: int, lr: float = 3e-3, batch: int = 64,
        l1: float = 0.01, every: int = 50, shift: bool = True) -> dict:
    """Adam on ``MSE(recon, x) + l1 * model.sparsity(codes)``; recovery of ``data.dictionary`` every ``every`` steps.

    Returns ``{"steps": [...], "recovery": [...], "mse": final train MSE, "seconds": wall time}``.
    """
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    resolution = data.x.shape[-1]
    curve_steps, curve = [], []
    start, loss = time.perf_counter(), torch.tensor(0.0)
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            with torch.no_grad():
                curve_steps.append(step)
                curve.append(recovery(model.atoms(resolution), data.dictionary, shift=shift).mean().item())
        if step == steps:
            break
        xb = data.x[torch.randint(0, data.x.shape[0], (batch,), generator=gen)]
        codes, recon = model(xb)
        loss = F_mse(recon, xb) + l1 * model.sparsity(codes)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        mse = F_mse(model(data.x)[1], data.x).item()
    return {"steps": curve_steps, "recovery": curve, "mse": mse, "seconds": time.perf_counter() - start}


def F_mse(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # noqa: N802 - mean squared error over everything
    return ((a - b) ** 2).mean()
