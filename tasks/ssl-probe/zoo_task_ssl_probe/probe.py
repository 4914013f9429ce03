"""Frozen-feature probes and collapse indicators, on plain (N, D) feature tensors and int64 labels.

Each function says exactly what it computes; all are deterministic (the few-shot episodes are seeded).
"""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

PROBE_L2, PROBE_ITERS = 1e-4, 100  # linear probe: L2 penalty on the weights, L-BFGS iterations
KNN_K, KNN_T = 20, 0.07  # kNN: neighbours and vote temperature (InstDisc / SimSiam's kNN monitor)
FEWSHOT_K, FEWSHOT_EPISODES = 5, 20


def _standardise(train: torch.Tensor, test: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    mu, sd = train.mean(0), train.std(0).clamp_min(1e-6)
    return (train - mu) / sd, (test - mu) / sd


def linear_probe(train_f: torch.Tensor, train_y: torch.Tensor, test_f: torch.Tensor, test_y: torch.Tensor, *,
                 l2: float = PROBE_L2, iters: int = PROBE_ITERS) -> float:
    """Test accuracy of a multinomial logistic regression on frozen features.

    Features are standardised with the training part's mean and std (a dimension with std 0 stays 0); the
    regression ``W f + b`` minimises mean cross-entropy + ``l2`` * ||W||^2 over the whole training part with
    full-batch L-BFGS (strong-Wolfe line search, ``iters`` iterations, float64, zero init): a fixed, convex
    recipe with one optimum, so the figure does not depend on a seed.

    >>> f = torch.tensor([[0.0], [1.0], [2.0], [3.0]]); y = torch.tensor([0, 0, 1, 1])
    >>> linear_probe(f, y, f, y)
    1.0
    """
    tr, te = _standardise(train_f.double(), test_f.double())
    n_classes = int(max(train_y.max(), test_y.max())) + 1
    w = torch.zeros(tr.shape[1], n_classes, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(n_classes, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], lr=1, max_iter=iters, history_size=20, line_search_fn="strong_wolfe",
                            tolerance_grad=1e-9, tolerance_change=1e-12)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(tr @ w + b, train_y) + l2 * (w * w).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    with torch.no_grad():
        return float(((te @ w + b).argmax(1) == test_y).double().mean())


def knn(train_f: torch.Tensor, train_y: torch.Tensor, test_f: torch.Tensor, test_y: torch.Tensor, *, k: int = KNN_K,
        temperature: float = KNN_T, chunk: int = 1024) -> float:
    """Test accuracy of a weighted k-nearest-neighbour vote on cosine similarity (InstDisc, Wu et al. 2018, as
    SimSiam's kNN monitor uses it): each test point's ``k`` most cosine-similar training points vote for their label
    with weight ``exp(cos / temperature)``; the label with the largest total wins. k = 20 here (InstDisc used 200 on
    ImageNet; our training parts hold 1-10k points).

    >>> f = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]); y = torch.tensor([0, 0, 1, 1])
    >>> knn(f, y, f, y, k=1)
    1.0
    """
    tr, te = F.normalize(train_f.float(), dim=1), F.normalize(test_f.float(), dim=1)
    n_classes = int(max(train_y.max(), test_y.max())) + 1
    k = min(k, len(tr))
    right = 0
    for s in range(0, len(te), chunk):
        sim, idx = (te[s:s + chunk] @ tr.T).topk(k, dim=1)
        votes = torch.zeros(len(sim), n_classes).scatter_add_(1, train_y[idx], torch.exp(sim / temperature))
        right += int((votes.argmax(1) == test_y[s:s + chunk]).sum())
    return right / len(te)


def few_shot(train_f: torch.Tensor, train_y: torch.Tensor, test_f: torch.Tensor, test_y: torch.Tensor, *,
             shots: int = FEWSHOT_K, episodes: int = FEWSHOT_EPISODES, seed: int = 0) -> float:
    """Mean test accuracy over ``episodes`` nearest-centroid classifiers (prototypes, Snell et al. 2017) each built
    from ``shots`` random labeled training points per class (the draw seeded by ``seed`` and the episode), on
    l2-normalised features, scoring every test point by cosine similarity to the class means.

    >>> f = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]); y = torch.tensor([0, 0, 1, 1])
    >>> few_shot(f, y, f, y, shots=1, episodes=3)
    1.0
    """
    tr, te = F.normalize(train_f.float(), dim=1), F.normalize(test_f.float(), dim=1)
    classes = sorted(set(train_y.tolist()))
    g = torch.Generator().manual_seed(seed)
    accs = []
    for _ in range(episodes):
        protos = []
        for c in classes:
            pool = (train_y == c).nonzero().flatten()
            pick = pool[torch.randperm(len(pool), generator=g)[:shots]]
            protos.append(tr[pick].mean(0))
        pred = torch.tensor(classes)[(te @ F.normalize(torch.stack(protos), dim=1).T).argmax(1)]
        accs.append(float((pred == test_y).double().mean()))
    return sum(accs) / len(accs)


def collapse(f: torch.Tensor) -> dict[str, float]:
    """Collapse indicators of features ``f`` (N, D).

    ``feature_std``: the mean over dimensions of the per-dimension std of the l2-normalised features (SimSiam,
    Sec. 4.1 / Fig. 2): 0 for a collapsed (constant) output, about 1/sqrt(D) for features spread isotropically.
    ``effective_rank``: exp of the Shannon entropy of the singular values of ``f`` normalised to sum 1 (RankMe,
    Garrido et al. 2023; features not centred): 1 for a rank-1 output, D for a perfectly isotropic one.

    >>> c = collapse(torch.ones(10, 4)); round(c["feature_std"], 6), round(c["effective_rank"], 3)
    (0.0, 1.0)
    """
    z = F.normalize(f.double(), dim=1)
    s = torch.linalg.svdvals(f.double())
    p = s / s.sum().clamp_min(1e-300)
    entropy = -(p * torch.log(p.clamp_min(1e-300))).sum()
    return {"feature_std": float(z.std(0).mean()), "effective_rank": float(math.exp(float(entropy)))}
