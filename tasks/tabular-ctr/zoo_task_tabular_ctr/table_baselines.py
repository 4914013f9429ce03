"""The baselines of tabular_ctr's ``table`` mode, on its contract ``forward(x_num (B, n_num), x_cat (B, n_cat) long)
-> (B,)`` (regression, binary logit) or ``(B, n_classes)`` logits:

- ``mlp``: the plain MLP of Gorishniy et al. (2021): categorical features through embeddings (8 dimensions each),
  concatenated with the numeric ones, then ``depth`` blocks Linear -> ReLU -> Dropout and a linear head; sized to a
  parameter count by its width (``build_baseline("mlp", params=...)``);
- ``hgb``: scikit-learn's HistGradientBoosting (regressor or classifier, library defaults, native categorical
  splits, seeded), fitted by its own ``fit_table(table)``; it has no trainable parameters.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

TABLE_BASELINES = ("mlp", "hgb")
D_CAT = 8


class CategoricalEmbeddings(nn.Module):
    """One embedding table per categorical feature: (B, n_cat) long -> (B, n_cat * d)."""

    def __init__(self, cardinalities: Sequence[int], d: int = D_CAT) -> None:
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(int(k), d) for k in cardinalities)
        self.out_dim = d * len(self.tables)

    def forward(self, x_cat: torch.Tensor) -> torch.Tensor:
        if not len(self.tables):
            return x_cat.new_zeros(x_cat.shape[0], 0, dtype=torch.float32)
        return torch.cat([t(x_cat[:, i]) for i, t in enumerate(self.tables)], dim=1)


def mlp_blocks(d_in: int, width: int, depth: int, d_out: int, dropout: float = 0.0) -> nn.Sequential:
    """``depth`` blocks Linear -> ReLU -> Dropout, then Linear(width, d_out)."""
    layers: list[nn.Module] = []
    for i in range(depth):
        layers += [nn.Linear(d_in if i == 0 else width, width), nn.ReLU(), nn.Dropout(dropout)]
    layers.append(nn.Linear(width if depth else d_in, d_out))
    return nn.Sequential(*layers)


class TableMLP(nn.Module):
    """The plain MLP baseline (see the module docstring)."""

    input_kind = "table"

    def __init__(self, n_num: int, cat_cardinalities: Sequence[int] = (), d_out: int = 1, width: int = 128,
                 depth: int = 2, dropout: float = 0.0) -> None:
        super().__init__()
        self.n_num, self.cat_cardinalities, self.d_out = int(n_num), list(cat_cardinalities), int(d_out)
        self.cat = CategoricalEmbeddings(self.cat_cardinalities)
        self.mlp = mlp_blocks(self.n_num + self.cat.out_dim, width, depth, self.d_out, dropout)

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        out = self.mlp(torch.cat([x_num, self.cat(x_cat)], dim=1))
        return out[:, 0] if self.d_out == 1 else out


class HGBTable(nn.Module):
    """HistGradientBoosting on the table (see the module docstring); ``forward`` returns its raw scores."""

    input_kind = "table"

    def __init__(self, n_num: int, cat_cardinalities: Sequence[int] = (), d_out: int = 1, kind: str = "regression",
                 seed: int = 0) -> None:
        super().__init__()
        self.n_num, self.cat_cardinalities, self.d_out = int(n_num), list(cat_cardinalities), int(d_out)
        self.kind, self.seed = kind, int(seed)
        self.estimator = None

    def _x(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> np.ndarray:
        return np.concatenate([x_num.double().numpy(), x_cat.double().numpy()], axis=1)

    def fit_table(self, table) -> None:
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        cats = [False] * self.n_num + [True] * len(self.cat_cardinalities)
        cls = HistGradientBoostingRegressor if self.kind == "regression" else HistGradientBoostingClassifier
        est = cls(random_state=self.seed, categorical_features=cats if any(cats) else None)
        self.estimator = est.fit(self._x(table.train.x_num, table.train.x_cat), table.train.y.numpy())

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        if self.estimator is None:
            raise RuntimeError("hgb: call fit_table(table) first")
        x = self._x(x_num, x_cat)
        z = self.estimator.predict(x) if self.kind == "regression" else self.estimator.decision_function(x)
        return torch.as_tensor(np.asarray(z), dtype=torch.float32)
