"""EmbedLLM (Zhuang et al. 2024, "EmbedLLM: Learning Compact Representations of Large Language Models",
arXiv:2410.02223): an encoder-decoder over a model x question correctness matrix whose by-product is a compact
embedding of every model.

The method (the paper's Section 3 framework as its abstract and the authors' released training code describe it;
read for understanding, not copied):

- **Model encoder**: an embedding table ``P`` (n_models, d), one learned vector per model.
- **Question encoder**: the question's text embedding (a frozen sentence encoder in the paper; here the task's
  question features) with Gaussian noise of std ``alpha`` added during training (a regulariser), projected to d by a
  linear layer (``hidden > 0`` inserts an MLP hidden layer, the catalog's "text features + MLP" variant).
- **Decoder**: a linear classifier on the element-wise product ``P[m] * q`` with two outputs (wrong, right), trained
  by cross-entropy on observed correctness; the logit of "right" is ``z_right - z_wrong``, so two-class cross-entropy
  equals binary cross-entropy on that logit, which is what ``forward`` returns and the task trains.
- **Routing**: ``route(question_feats)`` sends each question to the model with the largest predicted logit.

Paper defaults (``preset="paper"``): d = 232, alpha = 0.05, Adam lr 1e-4, weight decay 1e-5, batch 2048, 50 epochs
(the optimiser settings are the task's arguments: ``PAPER_TRAINING``). CPU default: d = 13, the same alpha: 743
parameters for the 30 x 24-feature matrix, matched to the task's per-model logistic regression (750).
Deviations: question features are the task's synthetic ones instead of sentence-transformer embeddings of real
benchmark questions, and the matrix is 30 x 2,000 instead of 112 models x 36k questions.

>>> import torch
>>> m = embedllm(n_models=5, n_features=3)
>>> m(torch.tensor([0, 4]), torch.randn(2, 3)).shape
torch.Size([2])
"""
from __future__ import annotations

import torch
from torch import nn

from zoo_task_tabular_ctr.baselines import CorrectnessModel

PRESETS = {"cpu": {"dim": 13, "alpha": 0.05}, "paper": {"dim": 232, "alpha": 0.05}}
PAPER_TRAINING = {"lr": 1e-4, "weight_decay": 1e-5, "batch": 2048, "epochs": 50}


class EmbedLLM(CorrectnessModel):
    """Model-embedding table + noisy projected question encoder + linear decoder on their product."""

    def __init__(self, n_models: int = 30, n_features: int = 24, dim: int = 13, alpha: float = 0.05,
                 hidden: int = 0) -> None:
        super().__init__(n_models, n_features)
        self.dim, self.alpha, self.hidden = int(dim), float(alpha), int(hidden)
        self.models = nn.Embedding(n_models, dim)
        self.question = (nn.Linear(n_features, dim) if hidden <= 0 else
                         nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, dim)))
        self.decoder = nn.Linear(dim, 2)

    def encode_questions(self, question_feats: torch.Tensor) -> torch.Tensor:
        """(B, F) -> (B, d); Gaussian noise of std alpha on the features while training."""
        if self.training and self.alpha > 0:
            question_feats = question_feats + self.alpha * torch.randn_like(question_feats)
        return self.question(question_feats)

    def two_class_logits(self, model_ids: torch.Tensor, question_feats: torch.Tensor) -> torch.Tensor:
        """(B, 2) decoder outputs (wrong, right), as the paper's classifier."""
        return self.decoder(self.models(model_ids) * self.encode_questions(question_feats))

    def forward(self, model_ids: torch.Tensor, question_feats: torch.Tensor) -> torch.Tensor:
        z = self.two_class_logits(model_ids, question_feats)
        return z[:, 1] - z[:, 0]

    def scores(self, question_feats: torch.Tensor) -> torch.Tensor:
        """(Q, F) -> (Q, M): every model's logit on every question, from one pass of the question encoder."""
        q = self.encode_questions(question_feats)  # (Q, d)
        w = self.decoder.weight[1] - self.decoder.weight[0]
        b = self.decoder.bias[1] - self.decoder.bias[0]
        return (q * w) @ self.models.weight.T + b

    def model_embeddings(self) -> torch.Tensor:
        """(n_models, d): the learned embedding of every model."""
        return self.models.weight.detach()


def embedllm(preset: str = "cpu", n_models: int = 30, n_features: int = 24, dim: int | None = None,
             alpha: float | None = None, hidden: int = 0) -> EmbedLLM:
    """EmbedLLM for a matrix of ``n_models`` models and ``n_features`` question features; ``preset`` "cpu" (d=13) or
    "paper" (d=232); alpha 0.05 in both."""
    if preset not in PRESETS:
        raise ValueError(f"embedllm: preset={preset!r}; choose from {tuple(PRESETS)}")
    p = PRESETS[preset]
    return EmbedLLM(n_models=n_models, n_features=n_features, dim=p["dim"] if dim is None else dim,
                    alpha=p["alpha"] if alpha is None else alpha, hidden=hidden)
