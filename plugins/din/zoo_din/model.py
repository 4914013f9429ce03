"""Deep Interest Network (Zhou, Zhu, Song et al. 2018, "Deep Interest Network for Click-Through Rate Prediction",
arXiv:1706.06978): the user's interest is a weighted sum of the behaviour embeddings, weighted by their relevance to
the candidate ad.

Section 4.3, Eq. 3, the local activation unit: the user representation for ad A is

    v_U(A) = sum_j a(e_j, v_A) e_j,

where ``a`` is a small feed-forward net (Fig. 2: one hidden layer of 36 units with PReLU or Dice, then Linear(1)) on
the behaviour and ad embeddings and their interaction, and the weights are NOT normalised by a softmax (so the
intensity of an interest survives). Fig. 2 draws the interaction as an "out product"; like the authors' released code
we feed ``[e_j, v_A, e_j - v_A, e_j * v_A]`` (element-wise product and difference). ``v_U(A)``, the ad's embedding
and the dense features go through the MLP of Fig. 2 (200 and 80 units, Dice) to a logit.

Section 5.2, Eq. 8, Dice: ``f(s) = p(s) s + (1 - p(s)) alpha s`` with ``p(s) = sigmoid((s - E[s]) / sqrt(Var[s] +
eps))``, eps = 1e-8, mean and variance of the mini-batch in training and moving averages at inference (a BatchNorm
without affine parameters computes them), ``alpha`` learned per unit. ``activation="prelu"`` is the paper's PReLU.

Section 5.1, Eqs. 4-6, mini-batch aware regularisation: only the embedding rows of ids present in the mini-batch are
penalised, each scaled by ``1 / n_j``, ``n_j`` the number of training impressions in which id ``j`` occurs:
``extra_loss = mba_lambda / 2 * sum_{j in batch} ||w_j||^2 / n_j`` (its gradient is Eq. 6's ``lambda alpha_mj w_j /
n_j``). The task calls ``prepare(...)`` with the training impressions to count ``n_j``, and adds ``extra_loss`` of each
batch to the BCE.

Defaults by name: ``PAPER`` (Fig. 2's widths; embedding 64 as in the authors' released Amazon code) and ``CPU``
(embedding 16, the same tower). Deviations: one item-id field (the paper also embeds category, shop and user profile
fields; here the user's dense features stand in for the profile); element-wise interaction instead of the figure's
out product; Dice's statistics in the attention unit are taken over the valid (unpadded) behaviours only; the MBA
coefficient ``mba_lambda`` = 0.01 is ours (the paper does not state its value).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

__all__ = ["CPU", "PAPER", "Dice", "LocalActivationUnit", "DIN", "din"]

CPU: dict[str, Any] = {"dim": 16, "hidden": (200, 80), "att_hidden": 36, "activation": "dice", "mba_lambda": 0.01}
PAPER: dict[str, Any] = {"dim": 64, "hidden": (200, 80), "att_hidden": 36, "activation": "dice", "mba_lambda": 0.01}
PRESETS = {"cpu": CPU, "paper": PAPER}
ACTIVATIONS = ("dice", "prelu")


class Dice(nn.Module):
    """Dice (Eq. 8) on (N, units): a PReLU whose rectification point follows the batch's mean and variance.

    >>> d = Dice(3).eval()  # at inference with fresh statistics (mean 0, var 1): p = sigmoid(s)
    >>> s = torch.tensor([[2.0, -2.0, 0.0]])
    >>> torch.allclose(d(s), torch.sigmoid(s) * s)  # alpha starts at 0
    True
    """

    def __init__(self, units: int, eps: float = 1e-8) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(units, eps=eps, affine=False)
        self.alpha = nn.Parameter(torch.zeros(units))

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        if self.training and s.shape[0] < 2:  # one row has no batch variance: use the moving averages
            z = nn.functional.batch_norm(s, self.bn.running_mean, self.bn.running_var, training=False, eps=self.bn.eps)
        else:
            z = self.bn(s)
        p = torch.sigmoid(z)
        return p * s + (1 - p) * self.alpha * s


def _act(kind: str, units: int) -> nn.Module:
    return Dice(units) if kind == "dice" else nn.PReLU(units)


class LocalActivationUnit(nn.Module):
    """``a(e_j, v_A)`` of Eq. 3 for every valid behaviour: (B, L, d), (B, d), mask (B, L) -> weights (B, L), 0 on
    padding, no softmax."""

    def __init__(self, dim: int, hidden: int = 36, activation: str = "dice") -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4 * dim, hidden), _act(activation, hidden), nn.Linear(hidden, 1))

    def forward(self, hist: torch.Tensor, ad: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        ad = ad[:, None, :].expand_as(hist)
        feats = torch.cat([hist, ad, hist - ad, hist * ad], dim=-1)[mask]  # (n_valid, 4d): Dice sees valid ones only
        w = hist.new_zeros(mask.shape)
        return w if feats.shape[0] == 0 else w.masked_scatter(mask, self.net(feats)[:, 0])


class DIN(nn.Module):
    """Deep Interest Network on the ``tabular_ctr`` CTR contract ``forward(hist_ids (B, L), hist_mask (B, L), ad_id
    (B,), dense (B, F)) -> logit (B,)``.

    Args:
        n_items: rows of the item embedding table (id 0 is padding).
        n_dense: dense (user) features.
        dim: embedding dimension, shared by behaviours and ads.
        hidden: the MLP's hidden layers.
        att_hidden: the local activation unit's hidden layer.
        activation: "dice" (Eq. 8) or "prelu", in both the MLP and the activation unit.
        mba_lambda: the mini-batch aware L2 coefficient (0: no regularisation).

    >>> net = DIN(n_items=30, n_dense=1, dim=4, hidden=(8, 4), att_hidden=6)
    >>> ids, mask = torch.randint(1, 30, (5, 7)), torch.ones(5, 7, dtype=torch.bool)
    >>> net(ids, mask, torch.randint(1, 30, (5,)), torch.randn(5, 1)).shape
    torch.Size([5])
    """

    input_kind = "ctr"

    def __init__(self, n_items: int = 1001, n_dense: int = 1, dim: int = CPU["dim"], hidden: tuple[int, ...] = CPU["hidden"],
                 att_hidden: int = CPU["att_hidden"], activation: str = CPU["activation"],
                 mba_lambda: float = CPU["mba_lambda"]) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"din: activation={activation!r}; choose from {ACTIVATIONS}")
        if n_items < 2 or dim < 1 or mba_lambda < 0 or not hidden:
            raise ValueError(f"din: need n_items >= 2 (id 0 is padding), dim >= 1, mba_lambda >= 0 and at least one "
                             f"hidden layer; got n_items={n_items}, dim={dim}, mba_lambda={mba_lambda}, hidden={hidden}")
        self.n_items, self.n_dense, self.dim = int(n_items), int(n_dense), int(dim)
        self.activation, self.mba_lambda = activation, float(mba_lambda)
        self.item = nn.Embedding(self.n_items, self.dim)
        nn.init.normal_(self.item.weight, std=0.01)
        self.attention = LocalActivationUnit(self.dim, att_hidden, activation)
        layers: list[nn.Module] = []
        d_in = 2 * self.dim + self.n_dense
        for h in hidden:
            layers += [nn.Linear(d_in, h), _act(activation, h)]
            d_in = h
        self.mlp = nn.Sequential(*layers, nn.Linear(d_in, 1))
        self.register_buffer("id_counts", torch.ones(self.n_items))

    def interest(self, hist_ids: torch.Tensor, hist_mask: torch.Tensor, ad_id: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``v_U(A)`` (B, d) of Eq. 3 and the activation weights (B, L)."""
        hist, ad = self.item(hist_ids), self.item(ad_id)
        w = self.attention(hist, ad, hist_mask)
        return (w.unsqueeze(-1) * hist).sum(1), w

    def forward(self, hist_ids: torch.Tensor, hist_mask: torch.Tensor, ad_id: torch.Tensor,
                dense: torch.Tensor) -> torch.Tensor:
        v_u, _ = self.interest(hist_ids, hist_mask.bool(), ad_id)
        return self.mlp(torch.cat([v_u, self.item(ad_id), dense], dim=1))[:, 0]

    def prepare(self, hist_ids: torch.Tensor, hist_mask: torch.Tensor, ad_id: torch.Tensor, dense: torch.Tensor,
                y: torch.Tensor) -> None:
        """Count ``n_j``: the occurrences of every id in the training impressions (behaviours and ads)."""
        ids = torch.cat([hist_ids[hist_mask.bool()], ad_id])
        counts = torch.bincount(ids, minlength=self.n_items)[: self.n_items].float()
        self.id_counts.copy_(counts.clamp_min(1.0))

    def extra_loss(self, hist_ids: torch.Tensor, hist_mask: torch.Tensor, ad_id: torch.Tensor,
                   dense: torch.Tensor) -> torch.Tensor:
        """The mini-batch aware L2 term (Eqs. 4-6) of this batch: only rows of ids present in it, over ``n_j``."""
        if self.mba_lambda == 0:
            return self.item.weight.new_zeros(())
        ids = torch.unique(torch.cat([hist_ids[hist_mask.bool()], ad_id]))
        w = self.item.weight[ids]
        return 0.5 * self.mba_lambda * ((w * w).sum(1) / self.id_counts[ids]).sum()


def din(*, preset: str = "cpu", **kw: Any) -> DIN:
    """DIN with the ``preset``'s defaults (``"cpu"`` or ``"paper"``), overridden by ``kw``."""
    if preset not in PRESETS:
        raise ValueError(f"din: preset={preset!r}; choose from {tuple(PRESETS)}")
    args = {**PRESETS[preset], **kw}
    args["hidden"] = tuple(args["hidden"])
    return DIN(**args)
