"""The routers tabular_ctr's ``matrix`` mode compares a model with, all on its contract
(:class:`CorrectnessModel`: ``forward(model_ids (B,), question_feats (B, F)) -> logit (B,)`` of "model answers the
question correctly", ``route(question_feats (Q, F)) -> (Q,)`` model ids, optional ``model_embeddings() -> (M, d)``):

- ``best_single``: every question goes to the model with the best training accuracy (its logit is the log-odds of
  that accuracy, the same for every question);
- ``knn_router``: the correctness of each model averaged over the ``k`` training questions nearest in cosine
  similarity of features (the kNN baseline of the EmbedLLM paper);
- ``per_model_logreg``: one logistic regression per model on the question features (trained by the task's loop);
- ``matrix_factorization``: a rank-``rank`` SVD of the centred training matrix, ``Y - mu_m ~ U V^T``, with the question
  factors V regressed on the features (ridge) so that held-out questions get factors; its model embeddings are U.

A model with a ``fit(y (M, Q_train), x (Q_train, F))`` method is fitted by it; any other model is trained by the
task's gradient loop (binary cross-entropy, Adam).
"""
from __future__ import annotations

import torch
from torch import nn

BASELINES = ("best_single", "knn_router", "per_model_logreg", "matrix_factorization")


def _logit(p: torch.Tensor) -> torch.Tensor:
    p = p.clamp(1e-3, 1 - 1e-3)
    return torch.log(p / (1 - p))


class CorrectnessModel(nn.Module):
    """Base class of the matrix-mode contract; subclasses implement ``forward``."""

    def __init__(self, n_models: int, n_features: int) -> None:
        super().__init__()
        self.n_models, self.n_features = int(n_models), int(n_features)

    def scores(self, question_feats: torch.Tensor) -> torch.Tensor:
        """(Q, F) -> (Q, M) logits of every model on every question."""
        q = question_feats.shape[0]
        ids = torch.arange(self.n_models).repeat(q)
        feats = question_feats.repeat_interleave(self.n_models, dim=0)
        return self(ids, feats).reshape(q, self.n_models)

    def route(self, question_feats: torch.Tensor) -> torch.Tensor:
        """The model predicted most likely to answer each question: argmax over models of the predicted logit."""
        return self.scores(question_feats).argmax(dim=1)


class BestSingle(CorrectnessModel):
    def __init__(self, n_models: int, n_features: int) -> None:
        super().__init__(n_models, n_features)
        self.register_buffer("acc", torch.full((n_models,), 0.5))

    def fit(self, y: torch.Tensor, x: torch.Tensor) -> None:
        self.acc = y.mean(1)

    def forward(self, model_ids: torch.Tensor, question_feats: torch.Tensor) -> torch.Tensor:
        return _logit(self.acc[model_ids])


class KNNRouter(CorrectnessModel):
    def __init__(self, n_models: int, n_features: int, k: int = 20) -> None:
        super().__init__(n_models, n_features)
        self.k = int(k)
        self.x: torch.Tensor | None = None
        self.y: torch.Tensor | None = None

    def fit(self, y: torch.Tensor, x: torch.Tensor) -> None:
        self.x, self.y = nn.functional.normalize(x, dim=1), y

    def neighbour_accuracy(self, question_feats: torch.Tensor) -> torch.Tensor:
        """(Q, F) -> (Q, M): each model's mean correctness over the k nearest training questions."""
        if self.x is None:
            raise RuntimeError("knn_router: call fit(y, x) first")
        sim = nn.functional.normalize(question_feats, dim=1) @ self.x.T
        nbr = sim.topk(min(self.k, sim.shape[1]), dim=1).indices  # (Q, k)
        return self.y[:, nbr].mean(dim=2).T

    def forward(self, model_ids: torch.Tensor, question_feats: torch.Tensor) -> torch.Tensor:
        acc = self.neighbour_accuracy(question_feats)
        return _logit(acc.gather(1, model_ids[:, None])[:, 0])

    def scores(self, question_feats: torch.Tensor) -> torch.Tensor:
        return _logit(self.neighbour_accuracy(question_feats))


class PerModelLogReg(CorrectnessModel):
    def __init__(self, n_models: int, n_features: int) -> None:
        super().__init__(n_models, n_features)
        self.linear = nn.Linear(n_features, n_models)

    def forward(self, model_ids: torch.Tensor, question_feats: torch.Tensor) -> torch.Tensor:
        w, b = self.linear.weight[model_ids], self.linear.bias[model_ids]
        return (w * question_feats).sum(1) + b

    def model_embeddings(self) -> torch.Tensor:
        return torch.cat([self.linear.weight, self.linear.bias[:, None]], dim=1).detach()


class MatrixFactorization(CorrectnessModel):
    def __init__(self, n_models: int, n_features: int, rank: int = 6, ridge: float = 1.0) -> None:
        super().__init__(n_models, n_features)
        self.rank, self.ridge = int(rank), float(ridge)
        self.register_buffer("mu", torch.full((n_models,), 0.5))
        self.register_buffer("u", torch.zeros(n_models, rank))
        self.register_buffer("b", torch.zeros(n_features + 1, rank))

    def fit(self, y: torch.Tensor, x: torch.Tensor) -> None:
        self.mu = y.mean(1)
        u, s, vh = torch.linalg.svd(y - self.mu[:, None], full_matrices=False)
        r = min(self.rank, len(s))
        self.u = u[:, :r] * s[:r]
        xa = torch.cat([x, torch.ones(len(x), 1)], dim=1)
        self.b = torch.linalg.solve(xa.T @ xa + self.ridge * torch.eye(xa.shape[1]), xa.T @ vh[:r].T)

    def forward(self, model_ids: torch.Tensor, question_feats: torch.Tensor) -> torch.Tensor:
        v = torch.cat([question_feats, torch.ones(len(question_feats), 1)], dim=1) @ self.b
        return _logit(self.mu[model_ids] + (self.u[model_ids] * v).sum(1))

    def model_embeddings(self) -> torch.Tensor:
        return self.u.detach()


_BUILDERS = {"best_single": BestSingle, "knn_router": KNNRouter, "per_model_logreg": PerModelLogReg,
             "matrix_factorization": MatrixFactorization}


def build_baseline(name: str, n_models: int = 30, n_features: int = 24, **kwargs) -> CorrectnessModel:
    """A baseline by name, for a matrix of ``n_models`` models and ``n_features`` question features."""
    if name not in _BUILDERS:
        raise ValueError(f"tabular_ctr: unknown baseline {name!r}; choose from {BASELINES}")
    return _BUILDERS[name](n_models, n_features, **kwargs)
