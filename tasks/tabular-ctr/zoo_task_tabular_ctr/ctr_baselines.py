"""The baselines of tabular_ctr's ``ctr`` mode, on its contract ``forward(hist_ids (B, L) long, hist_mask (B, L) bool,
ad_id (B,) long, dense (B, F)) -> logit (B,)``:

- ``sum_pooling``: the Embedding&MLP base model of the DIN paper (Zhou et al. 2018, Sec. 4.2): one item embedding
  table shared by the history and the ad, the history's embeddings summed over its valid positions into a
  fixed-length vector, concatenated with the ad's embedding and the dense features, an MLP (``width`` and
  ``0.4 width`` hidden units, PReLU; the paper's 200-80) and a logit;
- ``mean_pooling``: the same with the average over the valid positions.
Embeddings are initialised N(0, 0.01^2) (item 0 is padding); sized to a parameter count by the MLP width.
"""
from __future__ import annotations

import torch
from torch import nn

CTR_BASELINES = ("sum_pooling", "mean_pooling")


def hidden_sizes(width: int) -> tuple[int, int]:
    """The two hidden layers of the Embedding&MLP tower at ``width``: ``(width, 0.4 width)`` (200-80 at 200)."""
    return int(width), max(2, round(0.4 * width))


class PooledEmbeddingMLP(nn.Module):
    """Embedding&MLP with sum or mean pooling of the behaviour history (see the module docstring)."""

    input_kind = "ctr"

    def __init__(self, n_items: int, n_dense: int, dim: int = 16, width: int = 200, pooling: str = "sum") -> None:
        super().__init__()
        if pooling not in ("sum", "mean"):
            raise ValueError(f"pooling={pooling!r}; choose from ('sum', 'mean')")
        self.n_items, self.n_dense, self.dim, self.pooling = int(n_items), int(n_dense), int(dim), pooling
        self.item = nn.Embedding(self.n_items, self.dim)
        nn.init.normal_(self.item.weight, std=0.01)
        h1, h2 = hidden_sizes(width)
        self.mlp = nn.Sequential(nn.Linear(2 * self.dim + self.n_dense, h1), nn.PReLU(h1), nn.Linear(h1, h2),
                                 nn.PReLU(h2), nn.Linear(h2, 1))

    def forward(self, hist_ids: torch.Tensor, hist_mask: torch.Tensor, ad_id: torch.Tensor,
                dense: torch.Tensor) -> torch.Tensor:
        m = hist_mask.unsqueeze(-1).float()
        pooled = (self.item(hist_ids) * m).sum(1)
        if self.pooling == "mean":
            pooled = pooled / m.sum(1).clamp_min(1.0)
        return self.mlp(torch.cat([pooled, self.item(ad_id), dense], dim=1))[:, 0]
