"""Net2Vec concept embeddings (Fong & Vedaldi 2018, "Net2Vec: Quantifying and Explaining how Concepts are Encoded by
Filters in Deep Neural Networks", arXiv:1801.03454, section 3).

Only the abstract, the catalog entry and our recollection of the paper could be read here (the paper text and code
were not reachable), so the formulas below are this plugin's reading of section 3:

- **Segmentation** (sec. 3.1): for concept c and a layer's activation maps A (N, K, h, w), the embedding w in R^K
  (and a bias b) predicts the concept's mask as ``sigma(sum_k w_k A_k + b)``, the maps bilinearly upsampled to the
  image size. It is fitted with the paper's class-balanced per-pixel binary cross-entropy,
  ``-mean[alpha M log p + (1 - alpha) (1 - M) log(1 - p)]`` with ``alpha = 1 - mean(M)`` (the fraction of background
  pixels of that concept over the training set), and evaluated by the **set IoU** over a held-out split:
  ``sum_x |P(x) & M(x)| / sum_x |P(x) | M(x)|`` with P the prediction thresholded at 0.5.
- **Single-filter baseline** (network dissection, Bau et al. 2017, as sec. 3.1 compares): filter k thresholded at a
  top quantile T_k of its upsampled activations; the paper's quantile is 0.005. On 16x16 images where a concept fills
  ~4% of the pixels that quantile is far too strict, so the baseline picks its quantile from a grid (0.005 ... 0.5)
  and its filter by IoU on the training split (favourable to the baseline); then set IoU on the held-out split.
- **Classification** (sec. 3.2): a linear probe ``sigma(w^T mean_xy(A) + b)`` on spatially mean-pooled responses with
  the same balanced BCE; the single-filter baseline is the best 1-D logistic probe on one filter's pooled response.
  Both are scored by balanced accuracy on the held-out split.
- **How many filters** (sec. 4): the embedding refitted on only its top-k filters by |w| (k = 1, 2, 4, 8); ``k90`` is
  the smallest k reaching 90% of the full embedding's held-out IoU. The refit on k = 1 is the learned single filter.
- **Concept similarity** (sec. 4.3): cosine similarity between concept embeddings.

Deviations: activations are standardised per filter (z-score over the training split) so one learning rate fits all
layers, and w is fitted by full-batch Adam (``steps``, ``lr``) instead of the paper's SGD over Broden for 30 epochs;
the paper's weights live on raw activations (the same up to a per-filter rescaling).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

PAPER = {"quantile": 0.005, "optimizer": "SGD momentum 0.9, lr 1e-4, batch 64, 30 epochs", "threshold": 0.5}
QUANTILES = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)
TOP_KS = (1, 2, 4, 8)
DEFAULT_STEPS, DEFAULT_LR = 150, 0.05


def _t(x: Any) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x), dtype=torch.float32)


def check_maps(a: Any, masks: Any | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Validated activation maps (N, K, h, w) and concept masks (N, C, H, W) as float tensors."""
    a = _t(a)
    if a.ndim != 4:
        raise ValueError(f"activation maps have shape {tuple(a.shape)}: net2vec needs (N, K, h, w) maps")
    if a.shape[0] < 4:
        raise ValueError(f"{a.shape[0]} inputs: net2vec needs at least 4 (a training and a held-out split)")
    if not torch.isfinite(a).all():
        raise ValueError("activation maps hold NaN/inf values; drop those inputs before fitting")
    if masks is None:
        return a, None
    m = _t(masks)
    if m.ndim != 4 or m.shape[0] != a.shape[0]:
        raise ValueError(f"concept masks have shape {tuple(m.shape)}: net2vec needs (N={a.shape[0]}, C, H, W) "
                         "binary masks, one per input and concept")
    if not torch.isfinite(m).all() or ((m != 0) & (m != 1)).any():
        raise ValueError("concept masks must be binary (0/1 or bool)")
    return a, m


def concept_masks(object_masks: Any, labels: Any, n_classes: int | None = None) -> np.ndarray:
    """(N, C, H, W) concept masks: the object's mask in channel ``labels[i]``, empty elsewhere."""
    om = np.asarray(object_masks).astype(bool)
    y = np.asarray(labels).astype(np.int64)
    if om.ndim != 3 or y.shape != (om.shape[0],):
        raise ValueError(f"object masks {om.shape} and labels {y.shape}: need (N, H, W) masks and (N,) labels")
    c = int(n_classes if n_classes is not None else y.max() + 1)
    onehot = np.eye(c, dtype=bool)[y]
    return onehot[:, :, None, None] & om[:, None]


def _standardise(a: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    mu = ref.mean(dim=(0, 2, 3), keepdim=True)
    sd = ref.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
    return (a - mu) / sd


def _up(a: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    return a if tuple(a.shape[-2:]) == size else F.interpolate(a, size=size, mode="bilinear", align_corners=False)


def balanced_bce(logits: torch.Tensor, target: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """The paper's class-balanced BCE, ``-mean[alpha t log p + (1 - alpha)(1 - t) log(1 - p)]``, with the concept on
    the last axis (alpha (C,)); one fused call: weight 1 - alpha and pos_weight alpha / (1 - alpha)."""
    return F.binary_cross_entropy_with_logits(logits, target, weight=1 - alpha, pos_weight=alpha / (1 - alpha))


class _Adam:
    """Plain Adam (Kingma & Ba; betas 0.9, 0.999) on a few leaf tensors; torch.optim's import of its compiler
    costs seconds per process, more than these fits take."""

    def __init__(self, params: list[torch.Tensor], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        c1, c2 = 1 - 0.9 ** self.t, 1 - 0.999 ** self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            m.mul_(0.9).add_(p.grad, alpha=0.1)
            v.mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
            p.sub_(self.lr * (m / c1) / ((v / c2).sqrt() + 1e-8))


def _pixels(a: torch.Tensor) -> torch.Tensor:
    """(N, K, H, W) -> (N*H*W, K): one row per pixel, so a concept's logits are one matrix product."""
    return a.permute(0, 2, 3, 1).reshape(-1, a.shape[1])


def fit_segmentation(a: torch.Tensor, m: torch.Tensor, *, steps: int = DEFAULT_STEPS, lr: float = DEFAULT_LR,
                     select: torch.Tensor | None = None, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Embeddings W (K, C) and biases b (C,) of all C concepts at once (independent losses) on standardised,
    upsampled maps ``a`` (N, K, H, W) and masks ``m`` (N, C, H, W); ``select`` (K, C) zeroes filters out."""
    x, t = _pixels(a), _pixels(m)
    k, c = x.shape[1], t.shape[1]
    g = torch.Generator().manual_seed(int(seed))
    w = (0.01 * torch.randn(k, c, generator=g)).requires_grad_()
    b = torch.zeros(c, requires_grad=True)
    alpha = 1 - t.mean(0).clamp(1e-6, 1 - 1e-6)
    opt = _Adam([w, b], lr=lr)
    for _ in range(int(steps)):
        ww = w if select is None else w * select
        loss = balanced_bce(torch.addmm(b, x, ww), t, alpha)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    w = w.detach() if select is None else (w * select).detach()
    return w, b.detach()


def set_iou(pred: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """Set IoU per concept (axis 1) over all inputs and pixels: sum |P & M| / sum |P | M| (1 when both empty)."""
    p, t = pred.bool(), m.bool()
    inter = (p & t).sum(dim=(0, 2, 3)).double()
    union = (p | t).sum(dim=(0, 2, 3)).double()
    return torch.where(union > 0, inter / union.clamp_min(1), torch.ones_like(union)).float()


def _seg_iou(a: torch.Tensor, m: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    logits = torch.einsum("nkhw,kc->nchw", a, w) + b.view(1, -1, 1, 1)
    return set_iou(logits > 0, m)  # sigma > 0.5 (evaluated once, no gradient)


def single_filter(a_tr: torch.Tensor, m_tr: torch.Tensor, a_te: torch.Tensor, m_te: torch.Tensor,
                  quantiles: tuple[float, ...] = QUANTILES) -> dict[str, np.ndarray]:
    """Per concept: the (filter, top-quantile threshold) with the best training set IoU, and its held-out IoU."""
    k, c = a_tr.shape[1], m_tr.shape[1]
    mt = m_tr.permute(0, 2, 3, 1).reshape(-1, c)
    msum = mt.sum(0)
    best = torch.full((c,), -1.0)
    best_k = torch.zeros(c, dtype=torch.long)
    best_t = torch.zeros(c)
    for j in range(k):
        v = a_tr[:, j].reshape(-1)
        thr = torch.quantile(v[torch.randperm(len(v), generator=torch.Generator().manual_seed(j))[:200_000]],
                             torch.tensor([1 - q for q in quantiles]))
        for t in thr:
            p = (v > t).float()
            inter = p @ mt
            iou = inter / (p.sum() + msum - inter).clamp_min(1)
            better = iou > best
            best = torch.where(better, iou, best)
            best_k = torch.where(better, torch.full_like(best_k, j), best_k)
            best_t = torch.where(better, t.expand(c), best_t)
    pred = a_te[:, best_k] > best_t.view(1, -1, 1, 1)  # (N, C, H, W)
    return {"filter": best_k.numpy(), "threshold": best_t.numpy(), "train_iou": best.numpy(),
            "iou": set_iou(pred, m_te).numpy()}


def balanced_accuracy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean of the true-positive and true-negative rates per concept (last axis), predictions logits > 0."""
    p, t = logits > 0, y > 0.5
    tpr = (p & t).sum(0).float() / t.sum(0).clamp_min(1)
    tnr = (~p & ~t).sum(0).float() / (~t).sum(0).clamp_min(1)
    return (tpr + tnr) / 2


def fit_probe(x: torch.Tensor, y: torch.Tensor, *, steps: int = DEFAULT_STEPS, lr: float = DEFAULT_LR,
              diagonal: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Linear probes on pooled responses x (N, K) for labels y (N, C), balanced BCE. ``diagonal``: K x C separate
    1-D probes (one per filter and concept; the single-filter baseline), weights (K, C) and biases (K, C)."""
    k, c = x.shape[1], y.shape[1]
    w = torch.zeros(k, c, requires_grad=True)
    b = torch.zeros((k, c) if diagonal else (c,), requires_grad=True)
    alpha = 1 - y.mean(0).clamp(1e-6, 1 - 1e-6)
    opt = _Adam([w, b], lr=lr)
    for _ in range(int(steps)):
        if diagonal:  # (N, K, C) logits: K separate probes per concept
            loss = balanced_bce(x[:, :, None] * w + b, y[:, None, :].expand(-1, k, -1), alpha)
        else:
            loss = balanced_bce(x @ w + b, y, alpha)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return w.detach(), b.detach()


def _split(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    perm = np.random.default_rng(int(seed)).permutation(n)
    n_te = max(1, int(round(n * test_fraction)))
    if n - n_te < 2:
        raise ValueError(f"{n} inputs leave under 2 for training at test_fraction={test_fraction}")
    return perm[n_te:], perm[:n_te]


def _check_labels(y: torch.Tensor, idx: np.ndarray, what: str) -> None:
    pos = y[idx].sum(0)
    bad = [int(i) for i in torch.nonzero((pos < 1) | (pos > len(idx) - 1)).flatten()]
    if bad:
        raise ValueError(f"concepts {bad} have no positive or no negative input in the {what} split: every concept "
                         "needs both (more inputs, or drop those concepts)")


def net2vec(maps: Any, *, masks: Any | None = None, labels: Any | None = None, steps: int = DEFAULT_STEPS,
            lr: float = DEFAULT_LR, test_fraction: float = 0.3, seed: int = 0, top_ks: tuple[int, ...] = TOP_KS,
            sharing_top: int = 3) -> dict[str, Any]:
    """Net2Vec analysis of one layer: ``maps`` (N, K, h, w) (or (N, K) pooled responses: classification only),
    ``masks`` (N, C, H, W) concept masks and/or ``labels`` (N, C) binary concept presence (from the masks when not
    given). Returns numpy arrays per concept (see module docstring): ``seg_iou``, ``single_iou``, ``single_filter``,
    ``k90``, ``topk_iou``, ``probe_acc``, ``single_probe_acc``, ``top_fraction`` (|w| mass of the top filter),
    ``embeddings`` (K, C), ``similarity`` (C, C) and ``filter_sharing``."""
    a = _t(maps)
    if a.ndim == 2:
        a = a[:, :, None, None]
        if masks is not None:
            raise ValueError("segmentation needs activation maps (N, K, h, w), not pooled (N, K) responses")
    a, m = check_maps(a, masks)
    n, k = a.shape[:2]
    if labels is None and m is None:
        raise ValueError("net2vec needs concept masks (N, C, H, W) or labels (N, C) / (N,)")
    if labels is not None:
        y = _t(labels)
        if y.ndim == 1:
            yi = y.long()
            if (yi != y).any() or yi.min() < 0:
                raise ValueError("1-D labels must be non-negative class indices (one concept per class)")
            y = F.one_hot(yi, int(yi.max()) + 1).float()
        if y.ndim != 2 or y.shape[0] != n:
            raise ValueError(f"labels have shape {tuple(y.shape)}: need (N={n},) class indices or (N, C) 0/1")
    else:
        y = (m.sum(dim=(2, 3)) > 0).float()
    if m is not None and m.shape[1] != y.shape[1]:
        raise ValueError(f"masks have {m.shape[1]} concepts but labels {y.shape[1]}")
    tr, te = _split(n, test_fraction, seed)
    _check_labels(y, tr, "training")
    _check_labels(y, te, "held-out")
    az = _standardise(a, a[tr])
    out: dict[str, Any] = {"n_train": len(tr), "n_test": len(te), "filters": int(k), "concepts": int(y.shape[1])}
    # classification on pooled responses (sec. 3.2)
    pooled = az.mean(dim=(2, 3))
    pooled = (pooled - pooled[tr].mean(0)) / pooled[tr].std(0).clamp_min(1e-6)
    wp, bp = fit_probe(pooled[tr], y[tr], steps=steps, lr=lr)
    out["probe_acc"] = balanced_accuracy(pooled[te] @ wp + bp, y[te]).numpy()
    ws, bs = fit_probe(pooled[tr], y[tr], steps=steps, lr=lr, diagonal=True)
    tr_acc = torch.stack([balanced_accuracy(pooled[tr, j:j + 1] * ws[j] + bs[j], y[tr]) for j in range(k)])  # (K, C)
    best = tr_acc.argmax(0)
    te_acc = torch.stack([balanced_accuracy(pooled[te, j:j + 1] * ws[j] + bs[j], y[te]) for j in range(k)])
    out["single_probe_acc"] = te_acc[best, torch.arange(y.shape[1])].numpy()
    out["single_probe_filter"] = best.numpy()
    emb = wp
    if m is not None:  # segmentation (sec. 3.1)
        size = tuple(m.shape[-2:])
        up = _up(az, size)
        w, b = fit_segmentation(up[tr], m[tr], steps=steps, lr=lr, seed=seed)
        out["seg_iou"] = _seg_iou(up[te], m[te], w, b).numpy()
        single = single_filter(up[tr], m[tr], up[te], m[te])
        out["single_iou"], out["single_filter"] = single["iou"], single["filter"]
        topk = {}
        order = w.abs().argsort(dim=0, descending=True)
        for kk in (x for x in top_ks if x < k):
            sel = torch.zeros_like(w)
            sel.scatter_(0, order[:kk], 1.0)
            wk, bk = fit_segmentation(up[tr], m[tr], steps=steps, lr=lr, select=sel, seed=seed)
            topk[kk] = _seg_iou(up[te], m[te], wk, bk).numpy()
        topk[k] = out["seg_iou"]
        out["topk_iou"] = {int(kk): v for kk, v in topk.items()}
        ks = sorted(topk)
        out["k90"] = np.array([next(kk for kk in ks if topk[kk][c] >= 0.9 * topk[k][c]) for c in range(w.shape[1])])
        emb = w
    wa = emb.abs()
    out["top_fraction"] = (wa.max(0).values / wa.sum(0).clamp_min(1e-12)).numpy()
    top = emb.abs().argsort(dim=0, descending=True)[: min(sharing_top, k)]
    counts = np.bincount(top.flatten().numpy(), minlength=k)
    out["filter_sharing"] = float((counts >= 2).sum() / max((counts >= 1).sum(), 1))
    u = emb / emb.norm(dim=0, keepdim=True).clamp_min(1e-12)
    out["similarity"] = (u.T @ u).numpy()
    out["embeddings"] = emb.numpy()
    return out
