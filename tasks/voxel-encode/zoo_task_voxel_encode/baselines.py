"""voxel_encode baselines: per-voxel ridge regression with the penalty chosen by leave-one-out CV inside the shots,
and the population's mean response. Both follow the task's forward contract
``forward(ctx_feats (B, Nc, F), ctx_resp (B, Nc), query_feats (B, Nq, F)) -> (B, Nq)`` and have nothing to train.

``ridge_full`` is the same ridge given every meta-train image of the voxel as its context (the task does that): the
many-shot reference a few-shot method is measured against.
"""
from __future__ import annotations

import torch
from torch import nn

LAMBDAS = tuple(float(x) for x in torch.logspace(-4, 5, 19).tolist())
BASELINES = {"ridge": "per-voxel ridge on the same shots, lambda by leave-one-out CV within them",
             "ridge_full": "per-voxel ridge on all meta-train images of the voxel (many-shot reference)",
             "mean_response": "the meta-train voxels' mean response, read out linearly from the features; ignores context"}


def ridge_loo(x: torch.Tensor, y: torch.Tensor, lambdas: tuple[float, ...] = LAMBDAS) -> tuple[torch.Tensor, torch.Tensor,
                                                                                                 torch.Tensor]:
    """Per-row ridge with an intercept: ``(w (B, F), b (B,), lambda (B,))``, each row's lambda the one of ``lambdas``
    with the smallest leave-one-out squared error (closed form: residual / (1 - leverage), leverage counting the
    intercept). One thin SVD of the centred design per row serves every lambda, for n < F and n > F alike.

    >>> x = torch.randn(1, 30, 3, dtype=torch.float64); y = x @ torch.tensor([1., -2., .5], dtype=torch.float64) + 3
    >>> w, b, lam = ridge_loo(x, y)
    >>> [round(v, 4) for v in w[0].tolist()], round(float(b[0]), 4)
    ([1.0, -2.0, 0.5], 3.0)
    """
    x, y = x.double(), y.double()
    n = x.shape[1]
    if n < 2:
        raise ValueError(f"ridge needs at least 2 shots per voxel, got {n}")
    xm, ym = x.mean(1, keepdim=True), y.mean(1, keepdim=True)
    xc, yc = x - xm, y - ym
    u, s, vh = torch.linalg.svd(xc, full_matrices=False)  # (B, n, r), (B, r), (B, r, F)
    uty = (u.transpose(1, 2) @ yc.unsqueeze(-1)).squeeze(-1)  # (B, r)
    lam = torch.tensor(lambdas, dtype=x.dtype)
    s2 = s.pow(2).unsqueeze(1)  # (B, 1, r)
    shrink = s2 / (s2 + lam[None, :, None])  # (B, L, r)
    fitted = torch.einsum("bnr,blr,br->bln", u, shrink, uty)
    lev = torch.einsum("bnr,blr->bln", u.pow(2), shrink) + 1.0 / n
    denom = 1.0 - lev
    loo = ((yc.unsqueeze(1) - fitted) / denom.clamp_min(1e-3)).pow(2).mean(-1)
    loo = torch.where((denom < 1e-3).any(-1), torch.full_like(loo, float("inf")), loo)  # interpolating: no LOO estimate
    best = loo.argmin(1)  # (B,)
    coef = s / (s.pow(2) + lam[best][:, None])  # (B, r)
    w = (vh.transpose(1, 2) @ (coef * uty).unsqueeze(-1)).squeeze(-1)  # (B, F)
    b = ym.squeeze(1) - (xm.squeeze(1) * w).sum(-1)
    return w, b, lam[best]


class RidgeCV(nn.Module):
    """Per-voxel ridge fitted on the context at every call (nothing to train); ``last_lambda`` keeps the CV choice."""

    def __init__(self, lambdas: tuple[float, ...] = LAMBDAS):
        super().__init__()
        self.lambdas = tuple(lambdas)
        self.last_lambda: torch.Tensor | None = None

    def forward(self, ctx_feats: torch.Tensor, ctx_resp: torch.Tensor, query_feats: torch.Tensor) -> torch.Tensor:
        w, b, self.last_lambda = ridge_loo(ctx_feats, ctx_resp, self.lambdas)
        return ((query_feats.double() @ w.unsqueeze(-1)).squeeze(-1) + b[:, None]).to(query_feats.dtype)


class MeanResponse(nn.Module):
    """The population prior with no context: a linear readout (ridge, lambda 1) of the meta-train voxels' mean
    response to each meta-train image, applied to the query images."""

    def __init__(self, feats: torch.Tensor, mean_resp: torch.Tensor):
        super().__init__()
        w, b, _ = ridge_loo(feats[None], mean_resp[None], (1.0,))
        self.register_buffer("w", w[0].float())
        self.register_buffer("b", b.float())

    def forward(self, ctx_feats: torch.Tensor, ctx_resp: torch.Tensor, query_feats: torch.Tensor) -> torch.Tensor:
        return query_feats @ self.w + self.b


def build_baseline(name: str, *, params: int | None = None, data=None, seed: int = 0, **options) -> nn.Module:
    """``ridge`` / ``ridge_full``: :class:`RidgeCV`; ``mean_response``: :class:`MeanResponse` over ``data`` (a
    ``data.Split``). None of them has parameters to match: ``params`` is ignored."""
    if name in ("ridge", "ridge_full"):
        return RidgeCV(**options)
    if name == "mean_response":
        if data is None:
            raise ValueError("mean_response needs data= (a zoo_task_voxel_encode.data.Split) to average its voxels")
        n = data.n_train_images
        return MeanResponse(data.train_feats, data.train_voxels.responses[:, :n].mean(0))
    raise ValueError(f"unknown voxel_encode baseline {name!r}; choose from {', '.join(BASELINES)}")
