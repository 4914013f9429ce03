"""Geometry of layer updates (Yoo 2026, "On the Geometric Structure of Layer Updates in Deep Language Models",
arXiv 2604.02459, Sec. 3): split the update ``dh = h_{l+1} - h_l`` of every token into a tokenwise component
``f(h_l)`` (a restricted function applied to each token on its own) and the residual ``r = dh - f(h_l)``.

Only the abstract and the catalog entry were read closely; the function classes and statistics are this plugin's
reading of them (the paper fits local tokenwise linear maps A(x) x by nearest neighbours; here the restricted class
is a global one, chosen by ``fit``):

- ``fit="linear"``: an affine map ``W h + b`` fitted by ridge least squares on the training tokens;
- ``fit="mlp"``: a one-hidden-layer GELU MLP (width ``2 D``), full-batch Adam on the training tokens.

Reported on held-out tokens (the last ``test_frac`` of the sequences), averaged over tokens: ``align_full`` =
cos(dh, f), ``align_resid`` = cos(dh, r), their angles in degrees, ``proj_tokenwise`` / ``proj_resid`` = the share of
f's / r's squared norm inside the dominant tokenwise subspace (the top-``k`` principal directions of f on the
training tokens), ``resid_energy`` = sum ||r||^2 / sum ||dh||^2. With a model callable, ``perturbation_spearman``
replaces the update of one token at a time by its tokenwise part (h_l + f(h_l) in place of h_{l+1}) and ranks the
resulting output change (KL of the next-character distributions, summed over that position and the later ones)
against the token's approximation error ||r||: their Spearman correlation.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

FITS = ("linear", "mlp")


def _array(x: Any, what: str) -> np.ndarray:
    a = np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64)
    if a.ndim == 2:
        a = a[:, None, :]  # (N, D): one token per input
    if a.ndim != 3:
        raise ValueError(f"{what} has shape {a.shape}: layer updates need (N, T, D) (or (N, D)) hidden states")
    if not np.isfinite(a).all():
        raise ValueError(f"{what} holds NaN/inf values; fix the model or drop those inputs before measuring")
    return a


def split_sequences(n: int, test_frac: float) -> tuple[np.ndarray, np.ndarray]:
    """Train / test sequence indices: the last ``test_frac`` of the N sequences are held out."""
    if not 0.0 < test_frac < 1.0:
        raise ValueError(f"test_frac must be in (0, 1), got {test_frac}")
    n_test = int(round(n * test_frac))
    if n_test < 1 or n - n_test < 1:
        raise ValueError(f"{n} sequences cannot be split into train and test at test_frac={test_frac}; "
                         "pass at least 2 sequences")
    return np.arange(n - n_test), np.arange(n - n_test, n)


class Tokenwise:
    """A fitted tokenwise map f: R^D -> R^D (``predict`` on numpy rows, ``torch_fn`` for the model callable)."""

    def __init__(self, kind: str, params: dict[str, Any]):
        self.kind, self.params = kind, params

    def predict(self, x: np.ndarray) -> np.ndarray:
        p = self.params
        if self.kind == "linear":
            return x @ p["w"] + p["b"]
        import torch

        with torch.no_grad():
            return p["net"](torch.as_tensor(x, dtype=torch.float32)).double().numpy()

    def torch_fn(self):
        import torch

        if self.kind == "linear":
            w = torch.as_tensor(self.params["w"], dtype=torch.float32)
            b = torch.as_tensor(self.params["b"], dtype=torch.float32)
            return lambda h: h @ w.to(h.device) + b.to(h.device)
        net = self.params["net"]
        return lambda h: net.to(h.device)(h)


def fit_tokenwise(x: np.ndarray, y: np.ndarray, *, fit: str = "linear", ridge: float = 1e-3, steps: int = 300,
                  lr: float = 1e-2, seed: int = 0) -> Tokenwise:
    """Fit f with f(x_i) ~ y_i over token rows ``x``, ``y`` (M, D): ridge (scaled by the mean feature variance) for
    "linear", full-batch Adam (``steps``, ``lr``) on the mean squared error for "mlp"."""
    if fit not in FITS:
        raise ValueError(f"unknown tokenwise class {fit!r}; choose from {list(FITS)}")
    if len(x) < 2:
        raise ValueError(f"fitting a tokenwise map needs at least 2 training tokens, got {len(x)}")
    if fit == "linear":
        a = np.c_[x, np.ones(len(x))]
        reg = ridge * max(float(x.var(0).mean()), 1e-12) * len(x) * np.eye(a.shape[1])
        reg[-1, -1] = 0.0
        sol = np.linalg.solve(a.T @ a + reg, a.T @ y)
        return Tokenwise("linear", {"w": sol[:-1], "b": sol[-1]})
    import torch
    from torch import nn

    g = torch.Generator().manual_seed(int(seed))
    d = x.shape[1]
    net = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, y.shape[1]))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (1.0 / np.sqrt(p.shape[-1]) if p.ndim == 2 else 0.0))
    xs, ys = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    class Standardize(nn.Module):  # (h - mean) / std of the training tokens, as buffers
        def __init__(self, mu: torch.Tensor, sd: torch.Tensor):
            super().__init__()
            self.register_buffer("mu", mu)
            self.register_buffer("sd", sd)

        def forward(self, h: torch.Tensor) -> torch.Tensor:
            return (h - self.mu) / self.sd

    body = nn.Sequential(Standardize(xs.mean(0), xs.std(0) + 1e-6), net)
    opt = torch.optim.Adam(body.parameters(), lr=lr)
    with torch.enable_grad():
        for _ in range(int(steps)):
            loss = ((body(xs) - ys) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    body.eval()
    for p in body.parameters():
        p.requires_grad_(False)
    return Tokenwise("mlp", {"net": body})


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-12)


def update_geometry(h_in: Any, h_out: Any, *, fit: str = "linear", k: int | None = None, test_frac: float = 0.25,
                    seed: int = 0, return_map: bool = False, **fit_kw: Any) -> dict[str, Any]:
    """The decomposition of ``dh = h_out - h_in`` (both (N, T, D)) into f(h_in) and r, measured on held-out sequences
    (see the module docstring). ``k`` is the dimension of the dominant tokenwise subspace (default min(4, D))."""
    a, b = _array(h_in, "h_in"), _array(h_out, "h_out")
    if a.shape != b.shape:
        raise ValueError(f"h_in {a.shape} and h_out {b.shape} must have the same shape (N, T, D): consecutive layers "
                         "of the same inputs and width")
    k = min(4, a.shape[-1]) if k is None else k
    if not 1 <= int(k) <= a.shape[-1]:
        raise ValueError(f"k (the tokenwise subspace dimension) must be in [1, D = {a.shape[-1]}], got {k}")
    tr, te = split_sequences(a.shape[0], test_frac)
    d = a.shape[-1]
    dh = b - a
    xtr, ytr = a[tr].reshape(-1, d), dh[tr].reshape(-1, d)
    xte, yte = a[te].reshape(-1, d), dh[te].reshape(-1, d)
    f = fit_tokenwise(xtr, ytr, fit=fit, seed=seed, **fit_kw)
    fte, ftr = f.predict(xte), f.predict(xtr)
    r = yte - fte
    _, _, vt = np.linalg.svd(ftr - ftr.mean(0), full_matrices=False)
    basis = vt[: int(k)].T

    def share(v: np.ndarray) -> float:
        num = np.square((v - ftr.mean(0)) @ basis).sum(-1)
        return float(np.mean(num / np.maximum(np.square(v - ftr.mean(0)).sum(-1), 1e-24)))

    cf, cr = _cos(yte, fte), _cos(yte, r)
    out = {"align_full": float(cf.mean()), "align_resid": float(cr.mean()),
           "angle_full": float(np.degrees(np.arccos(np.clip(cf, -1, 1))).mean()),
           "angle_resid": float(np.degrees(np.arccos(np.clip(cr, -1, 1))).mean()),
           "proj_tokenwise": share(fte), "proj_resid": share(r + ftr.mean(0)),
           "resid_energy": float(np.square(r).sum() / max(np.square(yte).sum(), 1e-24)),
           "update_norm": float(np.linalg.norm(yte, axis=-1).mean()), "fit": fit, "k": int(k),
           "train_tokens": int(len(xtr)), "test_tokens": int(len(xte))}
    if return_map:
        out["map"] = f
        out["resid_norm"] = np.linalg.norm(r, axis=-1).reshape(len(te), -1)
        out["test_sequences"] = te
    return out


def layer_pairs(layers: Mapping[str, Any], order: Sequence[str] | None = None, **kw: Any) -> dict[str, dict[str, Any]]:
    """``update_geometry`` for every consecutive pair of ``layers`` (in ``order``, default the mapping's order),
    keyed ``"a->b"``."""
    names = list(order or layers)
    if len(names) < 2:
        raise ValueError(f"layer updates need at least 2 consecutive layers, got {names}")
    return {f"{p}->{q}": update_geometry(layers[p], layers[q], **kw) for p, q in zip(names[:-1], names[1:], strict=True)}


def spearman(a: Any, b: Any) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if len(a) != len(b) or len(a) < 3:
        raise ValueError(f"Spearman needs two equally long samples of >= 3 values, got {len(a)} and {len(b)}")
    return float(spearmanr(a, b).statistic)


def perturbation_spearman(model: Any, ids: Any, block: int, *, fit: str = "linear", fit_ids: Any = None,
                          seed: int = 0, tokenwise: Tokenwise | None = None, **fit_kw: Any) -> dict[str, float]:
    """For block ``block`` (>= 1) of a GPT-shaped model (``model.blocks``): fit f on ``fit_ids``' tokens (the
    update of ``blocks.{block}``: its output minus its input), then for every token of ``ids`` replace that block's
    output at that one position by ``h_in + f(h_in)`` and measure the output change (sum over that and later
    positions of KL(clean || replaced) of the next-character distributions). Returns the Spearman correlation
    between the per-token approximation error ||r|| and that output change, and their means. ``tokenwise``: an
    already fitted f (``update_geometry(..., return_map=True)["map"]``) instead of fitting one here."""
    import torch
    from torch.nn import functional as F

    blocks = model.blocks
    if not 0 <= int(block) < len(blocks):
        raise ValueError(f"block must be in [0, {len(blocks) - 1}], got {block}")
    ids = torch.as_tensor(ids)
    fit_ids = ids if fit_ids is None else torch.as_tensor(fit_ids)
    mod = blocks[int(block)]

    def io(x: torch.Tensor) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
        got = {}
        hook = mod.register_forward_hook(lambda _m, inp, out: got.update(i=inp[0].detach(), o=out.detach()))
        try:
            with torch.no_grad():
                logits = model(x)
        finally:
            hook.remove()
        return got["i"].double().numpy(), got["o"].double().numpy(), logits

    if tokenwise is None:
        hi, ho, _ = io(fit_ids)
        d = hi.shape[-1]
        tokenwise = fit_tokenwise(hi.reshape(-1, d), (ho - hi).reshape(-1, d), fit=fit, seed=seed, **fit_kw)
    f = tokenwise
    tf = f.torch_fn()
    errs, changes = [], []
    b, t = ids.shape
    for s in range(b):
        xi, xo, clean = io(ids[s:s + 1])
        r = (xo - xi)[0] - f.predict(xi[0])
        errs.append(np.linalg.norm(r, axis=-1))
        pos = torch.arange(t)

        def replace(_m, inp, out, pos=pos):
            h = inp[0]
            new = out.clone()
            new[pos, pos] = h[pos, pos] + tf(h[pos, pos])
            return new

        hook = mod.register_forward_hook(replace)
        try:
            with torch.no_grad():
                pert = model(ids[s:s + 1].expand(t, t).contiguous())
        finally:
            hook.remove()
        lp, lq = F.log_softmax(clean[0].double(), -1), F.log_softmax(pert.double(), -1)
        kl = (lp.exp()[None] * (lp[None] - lq)).sum(-1)  # (t variants, t positions)
        mask = pos[None, :] >= pos[:, None]
        changes.append((kl * mask).sum(-1).numpy())
    e, c = np.concatenate(errs), np.concatenate(changes)
    return {"spearman": spearman(e, c), "error_mean": float(e.mean()), "change_mean": float(c.mean()),
            "tokens": int(len(e))}


__all__ = ["FITS", "Tokenwise", "fit_tokenwise", "update_geometry", "layer_pairs", "spearman",
           "perturbation_spearman", "split_sequences"]
