"""The baselines of ``operator_learn`` and ``function_generate``, as models of the tasks' contracts.

* ``fno``: :class:`zoo_nn.operators.FNO1d` / ``FNO2d`` (Li et al. 2021), width matched to the model's parameters.
* ``unet``: :class:`zoo_nn.operators.UNet1d` / ``UNet2d``, width matched (a CNN: fixed kernels in grid cells).
* ``mlp_grid``: :class:`MLPGrid`, an MLP from the input's values on the training grid to the output's; it exists
  at that one resolution only (``evaluate`` reports NaN at the others, with the reason).
* ``linear`` / ``mlp_interp`` (functional regression): :class:`InterpMLP`, the curve interpolated to a fixed grid,
  then a linear map / an MLP to the output (the output curve on a grid, read at the query times by linear
  interpolation; a scalar for scalar-on-function).
* ``fpca_mlp``: :class:`FPCAMLP`, the top-K functional principal component scores of the interpolated curve
  (FPCA from the training curves, fixed) into an MLP.
* ``gp`` (function_generate): :class:`GPBaseline`, a Gaussian process whose kernel hyperparameters are fitted by
  maximum marginal likelihood on the training functions.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import match_params
from zoo_nn.operators import FNO1d, FNO2d, UNet1d, UNet2d

GRID_BASELINES = ("fno", "unet", "mlp_grid")
FUNCTIONAL_BASELINES = ("linear", "mlp_interp", "fpca_mlp")
GENERATE_BASELINES = ("gp",)
ALL = (*GRID_BASELINES, *FUNCTIONAL_BASELINES, *GENERATE_BASELINES)
# the baselines' sizes when no parameter count is given (and their fixed settings when one is)
FNO_MODES = {1: 16, 2: 8}  # 1D: the paper's 16; 2D: 8 (the paper's 12 is for 85x85; 8 fits a 32x32 grid's 16 modes)
FNO_WIDTH = {1: 32, 2: 24}
UNET_WIDTH, UNET_DEPTH = 16, 3
MLP_HIDDEN, MLP_LAYERS = 128, 3
INTERP_GRID = 64  # functional baselines: points of the grid the curves are interpolated to
FPCA_K = 8


def _sized(build: Any, params: int | None, default: int, lo: int = 2) -> nn.Module:
    return build(default) if params is None else match_params(build, params, lo=lo, hi=4096)


def build_fno(dim: int, in_channels: int, out_channels: int, *, params: int | None = None, **kw: Any) -> nn.Module:
    cls = FNO1d if dim == 1 else FNO2d
    kw = {"modes": FNO_MODES[dim], **kw}
    return _sized(lambda w: cls(in_channels, out_channels, width=w, **kw), params, FNO_WIDTH[dim])


def build_unet(dim: int, in_channels: int, out_channels: int, *, params: int | None = None, circular: bool = False) -> nn.Module:
    cls = UNet1d if dim == 1 else UNet2d
    return _sized(lambda w: cls(in_channels, out_channels, width=w, depth=UNET_DEPTH, circular=circular), params, UNET_WIDTH)


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.GELU())
    return nn.Sequential(*layers)


class MLPGrid(nn.Module):
    """An MLP on the flattened input grid: ``(B, C_in, *grid) -> (B, C_out, *grid)`` at the training ``grid`` only."""

    input_kind = "grid"

    def __init__(self, in_channels: int, out_channels: int, grid: tuple[int, ...], *, hidden: int = MLP_HIDDEN,
                 layers: int = MLP_LAYERS):
        super().__init__()
        self.in_channels, self.out_channels, self.grid = in_channels, out_channels, tuple(grid)
        size = math.prod(self.grid)
        self.net = _mlp([in_channels * size] + [hidden] * (layers - 1) + [out_channels * size])

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        if tuple(a.shape[2:]) != self.grid:
            raise ValueError(f"mlp_grid: built for the grid {self.grid}, got {tuple(a.shape[2:])}: an MLP on grid values "
                             "has no meaning at another resolution")
        return self.net(a.flatten(1)).reshape(a.shape[0], self.out_channels, *self.grid)


def build_mlp_grid(in_channels: int, out_channels: int, grid: tuple[int, ...], *, params: int | None = None) -> nn.Module:
    return _sized(lambda h: MLPGrid(in_channels, out_channels, grid, hidden=h), params, MLP_HIDDEN)


def interpolate_samples(samples: torch.Tensor, mask: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """Piecewise-linear interpolation of padded irregular samples ``(B, N, 2)`` [t, x(t)] (``mask`` (B, N) true where
    a sample exists, times sorted or not) onto ``grid`` (G,), constant beyond the first/last sample: (B, G)."""
    t, x = samples[..., 0], samples[..., 1]
    big = torch.finfo(t.dtype).max
    t = torch.where(mask.bool(), t, torch.full_like(t, big))  # padding sorts last
    order = t.argsort(dim=1)
    t, x = t.gather(1, order), x.gather(1, order)
    count = mask.bool().sum(1, keepdim=True).clamp_min(1)
    g = grid.to(t.dtype).expand(t.shape[0], -1).contiguous()
    right = torch.searchsorted(t, g).clamp(max=count - 1)  # first sample at or after g
    left = (right - 1).clamp(min=0)
    tl, tr, xl, xr = t.gather(1, left), t.gather(1, right), x.gather(1, left), x.gather(1, right)
    w = ((g - tl) / (tr - tl).clamp_min(1e-12)).clamp(0, 1)
    return torch.where(right == 0, xr, xl + w * (xr - xl))


def _interp_curve(y: torch.Tensor, t_query: torch.Tensor) -> torch.Tensor:
    """Read curves ``y`` (B, G) on the uniform grid of [0, 1] at ``t_query`` (B, M) by linear interpolation."""
    g = y.shape[1]
    pos = t_query.clamp(0, 1) * (g - 1)
    lo = pos.floor().long().clamp(max=g - 2)
    w = pos - lo
    return y.gather(1, lo) * (1 - w) + y.gather(1, lo + 1) * w


class InterpMLP(nn.Module):
    """Functional regression on a fixed grid: interpolate the input curve to ``grid_size`` points of [0, 1], apply a
    linear map (``hidden=0``) or an MLP, and read the output curve (on the same grid) at the query times.

    ``kind="samples"``: ``model(samples (B, N, 2), mask (B, N), t_query (B, M)) -> (B, M, 1)``;
    ``kind="curve"``: ``model(x (B, T), t (T,)) -> (B, 1)`` (the scalar-on-function contract).
    ``basis`` (G, K), when given, projects the interpolated curve on K fixed functions first (FPCA).
    """

    def __init__(self, kind: str = "samples", *, hidden: int = 64, layers: int = 3, grid_size: int = INTERP_GRID,
                 basis: torch.Tensor | None = None, mean: torch.Tensor | None = None):
        super().__init__()
        if kind not in ("samples", "curve"):
            raise ValueError(f"kind must be 'samples' or 'curve', got {kind!r}")
        self.input_kind = kind
        self.register_buffer("grid", torch.linspace(0, 1, grid_size))
        self.register_buffer("basis", basis if basis is not None else torch.empty(0))
        self.register_buffer("mean", mean if mean is not None else torch.zeros(grid_size))
        d_in = basis.shape[1] if basis is not None else grid_size
        d_out = grid_size if kind == "samples" else 1
        self.net = _mlp([d_in, d_out] if hidden == 0 else [d_in] + [hidden] * (layers - 1) + [d_out])

    def features(self, x: torch.Tensor) -> torch.Tensor:
        x = x - self.mean
        return x @ self.basis if self.basis.numel() else x

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        if self.input_kind == "samples":
            samples, mask, t_query = args
            y = self.net(self.features(interpolate_samples(samples, mask, self.grid)))
            return _interp_curve(y, t_query)[..., None]
        x, t = args
        dense = interpolate_samples(torch.stack([t.expand_as(x), x], -1), torch.ones_like(x, dtype=torch.bool), self.grid)
        return self.net(self.features(dense))


def fpca(curves: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean (G,) and the top-``k`` principal component functions (G, k) of curves (n, G) on a uniform grid,
    scaled so the scores have unit variance (the eigenfunctions of the sample covariance, Ramsay & Silverman ch. 8)."""
    mean = curves.mean(0)
    u, s, vt = torch.linalg.svd(curves - mean, full_matrices=False)
    k = min(k, vt.shape[0])
    scale = s[:k] / math.sqrt(max(curves.shape[0] - 1, 1))
    return mean, vt[:k].T / scale.clamp_min(1e-12)


def build_functional(name: str, kind: str, *, params: int | None = None, curves: torch.Tensor | None = None,
                     k: int = FPCA_K) -> nn.Module:
    """``linear`` (no hidden layer: not sized), ``mlp_interp`` or ``fpca_mlp`` (hidden width matched to ``params``);
    ``fpca_mlp`` needs the training ``curves`` interpolated to the ``INTERP_GRID`` grid (n, G)."""
    if name == "linear":
        return InterpMLP(kind, hidden=0)
    if name == "mlp_interp":
        return _sized(lambda h: InterpMLP(kind, hidden=h), params, 64)
    if curves is None:
        raise ValueError("fpca_mlp needs the training curves (data=) to compute its principal components")
    mean, basis = fpca(curves.float(), k)
    return _sized(lambda h: InterpMLP(kind, hidden=h, basis=basis, mean=mean), params, 64)


class GPBaseline(nn.Module):
    """A zero-mean Gaussian process with a stationary kernel (``rbf`` or ``matern`` with ``nu``), its variance,
    lengthscale and a small noise fitted by maximising the summed log marginal likelihood of the training functions
    (each on its own points; Rasmussen & Williams 2006, eq. 2.30), by L-BFGS on the log-parameters.

    ``sample`` draws from the fitted prior, ``condition`` from the exact posterior given observations.
    """

    input_kind = "generative"

    def __init__(self, kernel: str = "rbf", nu: float = 2.5):
        super().__init__()
        if kernel not in ("rbf", "matern"):
            raise ValueError(f"gp: kernel must be 'rbf' or 'matern', got {kernel!r}")
        self.kernel, self.nu = kernel, nu
        # log variance, log lengthscale, log noise variance: fitted, not trained by gradient steps of the task
        self.register_buffer("log_params", torch.tensor([0.0, math.log(0.2), math.log(1e-4)], dtype=torch.float64))

    def k(self, x: torch.Tensor, y: torch.Tensor, log_params: torch.Tensor | None = None) -> torch.Tensor:
        lv, ll, _ = (self.log_params if log_params is None else log_params).unbind()
        r = torch.cdist(x.double(), y.double()) / ll.exp()
        if self.kernel == "rbf":
            return lv.exp() * torch.exp(-0.5 * r ** 2)
        if self.nu == 0.5:
            return lv.exp() * torch.exp(-r)
        if self.nu == 1.5:
            s = math.sqrt(3) * r
            return lv.exp() * (1 + s) * torch.exp(-s)
        s = math.sqrt(5) * r
        return lv.exp() * (1 + s + s ** 2 / 3) * torch.exp(-s)

    def _nll(self, lp: torch.Tensor, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        n, m = values.shape[0], values.shape[1]
        kxx = self.k(coords, coords, lp) + (lp[2].exp() + 1e-8) * torch.eye(m, dtype=torch.float64)
        chol = torch.linalg.cholesky(kxx)  # (n, m, m): each function on its own points
        y = values.double()
        alpha = torch.cholesky_solve(y, chol)
        logdet = chol.diagonal(dim1=-2, dim2=-1).log().sum()
        return 0.5 * (y * alpha).sum() + y.shape[-1] * logdet + 0.5 * n * m * math.log(2 * math.pi)

    def fit(self, values: torch.Tensor, coords: torch.Tensor, *, steps: int | None = 100, seed: int = 0,
            progress: Any = None, budget_s: float | None = None) -> dict[str, float]:
        lp = self.log_params.clone().requires_grad_(True)
        opt = torch.optim.LBFGS([lp], lr=0.5, max_iter=steps or 100, line_search_fn="strong_wolfe")
        v, c = torch.as_tensor(values).double(), torch.as_tensor(coords).double()

        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = self._nll(lp, v, c) / v.numel()
            loss.backward()
            return loss

        opt.step(closure)
        with torch.no_grad():
            lp[2].clamp_(min=math.log(1e-8))
            self.log_params.copy_(lp.detach())
        lv, ll, ln = self.log_params.exp().tolist()
        nll = float(self._nll(self.log_params, v, c)) / v.numel()
        return {"variance": lv, "lengthscale": ll, "noise": ln, "nll_per_value": nll}

    def sample(self, coords: torch.Tensor, n: int, *, seed: int = 0) -> torch.Tensor:
        c = torch.as_tensor(coords).double()
        cov = self.k(c, c) + 1e-8 * torch.eye(len(c), dtype=torch.float64)
        chol = _jittered_cholesky(cov)
        g = torch.Generator().manual_seed(seed)
        z = torch.randn(n, len(c), 1, generator=g, dtype=torch.float64)
        return (chol @ z).float()

    def posterior(self, obs_coords: torch.Tensor, obs_values: torch.Tensor,
                  query_coords: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        xo, yo, xq = (torch.as_tensor(a).double() for a in (obs_coords, obs_values, query_coords))
        koo = self.k(xo, xo) + (self.log_params[2].exp() + 1e-8) * torch.eye(len(xo), dtype=torch.float64)
        kqo, kqq = self.k(xq, xo), self.k(xq, xq)
        chol = torch.linalg.cholesky(koo)
        mean = kqo @ torch.cholesky_solve(yo.reshape(len(xo), -1), chol)
        cov = kqq - kqo @ torch.cholesky_solve(kqo.T, chol)
        return mean, cov

    def condition(self, obs_coords: torch.Tensor, obs_values: torch.Tensor, query_coords: torch.Tensor, n: int, *,
                  seed: int = 0) -> torch.Tensor:
        mean, cov = self.posterior(obs_coords, obs_values, query_coords)
        chol = _jittered_cholesky(cov)
        g = torch.Generator().manual_seed(seed)
        z = torch.randn(n, len(mean), mean.shape[1], generator=g, dtype=torch.float64)
        return (mean + chol @ z).float()

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        return self.sample(coords, 1)[0]


def _jittered_cholesky(cov: torch.Tensor) -> torch.Tensor:
    jitter = 1e-10 * float(cov.diagonal().mean().abs().clamp_min(1e-12))
    eye = torch.eye(len(cov), dtype=cov.dtype)
    for _ in range(8):
        chol, info = torch.linalg.cholesky_ex(cov + jitter * eye)
        if int(info) == 0:
            return chol
        jitter *= 10
    evals, evecs = torch.linalg.eigh(cov)  # not positive definite at any jitter tried: clip the spectrum
    return evecs * evals.clamp_min(0).sqrt()


def to_numpy(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
