"""Canonical holdout (Abbe et al. 2022, Section on distribution shift): train a model on the half cube where bit k is
frozen to +1, test on the unseen half x_k = -1, and set the test error next to the Boolean-influence prediction.

Models (``MODELS``): ``linear`` (w.x + b), ``mlp`` (two ReLU hidden layers) and ``transformer`` (each bit a token:
a learned embedding of its value plus a position embedding, one pre-norm attention + MLP block, mean pooling, a linear
read-out), all trained from PyTorch's default initialisation (the linear model from zero, as in the paper's linear
analysis) on the squared loss, full batch.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from .boolean import EXACT_LIMIT, Target, _eval, boolean_influence, cube, holdout_prediction, linear_holdout_prediction


class Linear(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.lin = nn.Linear(n, 1)
        nn.init.zeros_(self.lin.weight)
        nn.init.zeros_(self.lin.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).squeeze(-1)


class MLP(nn.Module):
    def __init__(self, n: int, width: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


class TinyTransformer(nn.Module):
    def __init__(self, n: int, dim: int = 32, heads: int = 2):
        super().__init__()
        self.val = nn.Embedding(2, dim)
        self.pos = nn.Parameter(torch.randn(n, dim) * 0.02)
        self.block = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.val((x > 0).long()) + self.pos
        return self.out(self.norm(self.block(h)).mean(1)).squeeze(-1)


MODELS: dict[str, Callable[[int], nn.Module]] = {"linear": Linear, "mlp": MLP, "transformer": TinyTransformer}
# per model: optimiser, learning rate, steps (full batch): GD for the linear model, Adam for the networks
TRAINING: dict[str, dict[str, Any]] = {"linear": {"opt": "sgd", "lr": 0.2, "steps": 400},
                                       "mlp": {"opt": "adam", "lr": 3e-3, "steps": 300},
                                       "transformer": {"opt": "adam", "lr": 3e-3, "steps": 300}}


def canonical_holdout(model_builder: Callable[[int], nn.Module] | str, f: Target, n: int, k: int, *,
                      seed: int = 0, steps: int | None = None, lr: float | None = None, opt: str | None = None,
                      samples: int | None = None) -> dict[str, float]:
    """Train ``model_builder(n)`` (or a name in ``MODELS``) on f over {x : x_k = +1}, test on {x : x_k = -1}.

    The whole cube is used for n <= 16 (``samples`` uniform points of each half otherwise). Returns ``test_mse`` (the
    unseen half), ``train_mse``, ``influence`` (Inf_k f), ``prediction`` (4 Inf_k: the min-degree learner's unseen
    error) and ``linear_prediction`` (GD on w.x + b, exact)."""
    if not 0 <= k < n:
        raise ValueError(f"frozen bit {k} is outside 0..{n - 1}")
    name = model_builder if isinstance(model_builder, str) else None
    if name is not None and name not in MODELS:
        raise ValueError(f"unknown model {name!r}; one of {sorted(MODELS)} or a callable n -> nn.Module")
    cfg = {**TRAINING.get(name or "mlp", TRAINING["mlp"])}
    cfg.update({key: v for key, v in (("steps", steps), ("lr", lr), ("opt", opt)) if v is not None})
    if n <= EXACT_LIMIT and samples is None:
        x = cube(n)
    else:
        x = np.random.default_rng(seed).choice([-1.0, 1.0], size=(samples or 4096, n))
    y = _eval(f, x) if callable(f) else np.asarray(f, dtype=np.float64).ravel()
    seen = x[:, k] > 0
    torch.manual_seed(seed)
    model = MODELS[name](n) if name is not None else model_builder(n)
    xt, yt = torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    params = list(model.parameters())
    optim = torch.optim.SGD(params, lr=cfg["lr"]) if cfg["opt"] == "sgd" else torch.optim.Adam(params, lr=cfg["lr"])
    xs, ys = xt[torch.from_numpy(seen)], yt[torch.from_numpy(seen)]
    for _ in range(int(cfg["steps"])):
        optim.zero_grad()
        loss = ((model(xs) - ys) ** 2).mean()
        loss.backward()
        optim.step()
    with torch.no_grad():
        unseen = torch.from_numpy(~seen)
        test = float(((model(xt[unseen]) - yt[unseen]) ** 2).mean())
        train = float(((model(xs) - ys) ** 2).mean())
    # influence by enumeration up to EXACT_LIMIT bits, Monte Carlo beyond (a callable target only)
    inf = float(boolean_influence(f, n, k)) if n <= EXACT_LIMIT or callable(f) else float("nan")
    return {"test_mse": test, "train_mse": train, "influence": inf, "prediction": 4 * inf,
            "linear_prediction": linear_holdout_prediction(f, n, k) if n <= EXACT_LIMIT else float("nan")}


__all__ = ["canonical_holdout", "MODELS", "TRAINING", "Linear", "MLP", "TinyTransformer", "holdout_prediction"]
