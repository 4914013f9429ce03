"""Kolmogorov-Arnold layers shared by the tasks and the KAN plugins.

``BSplineKANLayer`` and ``KAN`` follow Liu et al. 2024, "KAN: Kolmogorov-Arnold Networks"
(arXiv:2404.19756); ``RBFKANLayer`` is the radial-basis family (FastKAN's Gaussian basis,
FasterKAN's reflectional-switch basis) that MLP-KAN and ViKANformer use. Everything is
vectorised over edges: one basis tensor ``(N, in, n_basis)`` and one matmul per layer.

    >>> import torch
    >>> from zoo_nn.kan import KAN
    >>> net = KAN([2, 5, 1], grid_size=5)
    >>> net(torch.rand(8, 2)).shape
    torch.Size([8, 1])
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["bspline_basis", "cox_de_boor", "uniform_grid", "fit_spline_coef", "BSplineKANLayer", "KAN",
           "RBFKANLayer", "kan_param_count"]


def uniform_grid(n: int, grid_size: int, spline_order: int, grid_range: Sequence[float] = (-1.0, 1.0)) -> torch.Tensor:
    """Knots ``(n, grid_size + 2 * spline_order + 1)``: ``grid_size`` equal intervals on ``grid_range``,
    extended by ``spline_order`` knots on each side so that every interval has a full basis."""
    lo, hi = float(grid_range[0]), float(grid_range[1])
    h = (hi - lo) / grid_size
    knots = torch.arange(-spline_order, grid_size + spline_order + 1, dtype=torch.float32) * h + lo
    return knots.expand(n, -1).contiguous()


def bspline_basis(x: torch.Tensor, grid: torch.Tensor, spline_order: int) -> torch.Tensor:
    """B-spline basis functions of order ``spline_order`` on each feature's knots.

    Args:
        x: ``(..., n)`` inputs, one column per input feature.
        grid: ``(n, m)`` knots per feature (``m = G + 2k + 1``, see ``uniform_grid``).
        spline_order: ``k`` (3 for cubic splines).

    Returns:
        ``(..., n, G + k)``; zero outside ``[grid[:, 0], grid[:, -1])``.

    Uniform knots (every row equally spaced, the default grid) take a fast path: only the ``k + 1``
    non-zero bases of each input are computed, as polynomials in its position within its interval,
    and scattered into place; other grids use the Cox-de Boor recursion (``cox_de_boor``).

    >>> b = bspline_basis(torch.tensor([[0.1]]), uniform_grid(1, 5, 3), 3)
    >>> round(float(b.sum()), 6)  # partition of unity inside the grid
    1.0
    """
    step = grid[:, 1:] - grid[:, :-1]
    if bool(torch.all((step - step[:, :1]).abs() <= 1e-5 * step[:, :1].abs())):
        return _uniform_basis(x, grid, spline_order)
    return cox_de_boor(x, grid, spline_order)


def cox_de_boor(x: torch.Tensor, grid: torch.Tensor, spline_order: int) -> torch.Tensor:
    """``bspline_basis`` for any non-decreasing knots, by the Cox-de Boor recursion over all bases."""
    x = x.unsqueeze(-1)
    bases = ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype)
    for k in range(1, spline_order + 1):
        left = (x - grid[:, : -(k + 1)]) / (grid[:, k:-1] - grid[:, : -(k + 1)])
        right = (grid[:, k + 1:] - x) / (grid[:, k + 1:] - grid[:, 1:-k])
        bases = left * bases[..., :-1] + right * bases[..., 1:]
    return bases


@functools.lru_cache(maxsize=8)
def _cardinal_pieces(spline_order: int) -> torch.Tensor:
    """``(k + 1, k + 1)`` power coefficients: row ``r`` is the cardinal B-spline ``N(f + k - r)`` on
    ``f in [0, 1)`` as a polynomial ``sum_p c[r, p] f^p`` (fitted exactly from the recursion)."""
    k = spline_order
    f = torch.linspace(0.05, 0.95, k + 1, dtype=torch.float64)
    knots = torch.arange(0, 2 * k + 2, dtype=torch.float64).unsqueeze(0)  # unit knots 0..2k+1
    vals = cox_de_boor((f + k).unsqueeze(1), knots, k)[:, 0, :k + 1]  # B_j(f + k) = N(f + k - j), j = 0..k
    vander = f.unsqueeze(1) ** torch.arange(k + 1, dtype=torch.float64)
    return torch.linalg.solve(vander, vals).T.contiguous()  # (r, p)


def _uniform_basis(x: torch.Tensor, grid: torch.Tensor, spline_order: int) -> torch.Tensor:
    k, n_basis = spline_order, grid.shape[1] - 1 - spline_order
    u = (x - grid[:, 0]) / (grid[:, 1] - grid[:, 0])  # position in knot steps from the first knot
    span = torch.floor(u)
    f = (u - span).unsqueeze(-1)  # (..., n, 1) in [0, 1)
    powers = torch.cat([torch.ones_like(f)] + [f ** p for p in range(1, k + 1)], dim=-1)
    weights = powers @ _cardinal_pieces(k).to(x.dtype).T  # (..., n, k + 1): bases span - k .. span
    idx = span.long().unsqueeze(-1) - k + torch.arange(k + 1, device=x.device)
    valid = (idx >= 0) & (idx < n_basis) & (span.unsqueeze(-1) < grid.shape[1] - 1)
    out = x.new_zeros(*x.shape, n_basis)
    return out.scatter_add(-1, idx.clamp(0, n_basis - 1), weights * valid)


def fit_spline_coef(basis: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Least-squares spline coefficients: ``basis (N, in, nb)``, ``values (N, in, out)`` -> ``(out, in, nb)``."""
    sol = torch.linalg.lstsq(basis.transpose(0, 1).double(), values.transpose(0, 1).double()).solution
    return sol.permute(2, 0, 1).to(values.dtype).contiguous()


# Liu et al. 2024, Eq. 2.10: phi(x) = w_b * b(x) + w_s * spline(x), b = silu, spline(x) = sum_i c_i B_i(x);
# a layer sums phi over its inputs (Eq. 2.5). Initialisation (Sec. 2.2, "Initialization scales"): w_s = 1,
# spline(x) ~ 0 with c_i ~ N(0, sigma^2), sigma = 0.1, and w_b Xavier (the authors' code, pykan, realises
# "spline(x) ~ 0" instead as the fit to uniform noise of size sigma / G at the grid points: coef_init="fit").
# Grid update (Sec. 2.2) and grid extension (Sec. 2.4) refit c by least squares on the new grid.
class BSplineKANLayer(nn.Module):
    """A KAN layer: one learnable activation ``phi_{j,i}`` per edge, summed over inputs.

    Args:
        in_features, out_features: layer widths.
        grid_size: ``G``, intervals of the spline grid.
        spline_order: ``k`` (3: cubic).
        grid_range: the initial grid's interval; inputs outside it only see ``w_b * b(x)``.
        base_activation: ``b``, called with no arguments (``nn.SiLU`` as in the paper).
        noise_scale: size of the initial spline noise (paper: sigma = 0.1; see ``coef_init``).
        init: ``"kan"`` (the paper: ``w_s = 1``, ``w_b`` Xavier-uniform, ``c`` by ``coef_init``) or
            ``"efficient"`` (efficient-kan's variant: ``w_b`` and ``w_s`` Kaiming-uniform, ``c`` fitted as
            with ``coef_init="fit"``).
        coef_init: how ``init="kan"`` draws ``c``: ``"normal"`` (the paper's text, ``c ~ N(0, noise_scale^2)``)
            or ``"fit"`` (the authors' released code, pykan: ``c`` is the least-squares fit to uniform noise
            of size ``noise_scale / G`` at the ``G + 1`` grid points: initial spline values ~13x smaller at
            G = 5; it trains to lower error on formula_regress, see ``benchmarks/peers/pykan.py``).
        grid_eps: mix of a uniform grid into the data-adaptive one in ``update_grid`` (paper code: 0.02).
        bias: add a learnable bias per output (the paper's Eq. 2.5 has none).

    One grid per input feature (all edges leaving an input see the same values, so per-edge grids
    would coincide after ``update_grid``). Parameters: ``base_weight`` (w_b, ``(out, in)``),
    ``spline_scale`` (w_s, ``(out, in)``), ``spline_coef`` (c, ``(out, in, G + k)``).

    >>> layer = BSplineKANLayer(3, 4)
    >>> layer(torch.rand(10, 3)).shape
    torch.Size([10, 4])
    """

    def __init__(self, in_features: int, out_features: int, grid_size: int = 5, spline_order: int = 3,
                 grid_range: Sequence[float] = (-1.0, 1.0), base_activation: Callable[[], nn.Module] = nn.SiLU,
                 noise_scale: float = 0.1, init: str = "kan", grid_eps: float = 0.02, bias: bool = False,
                 coef_init: str = "normal"):
        super().__init__()
        if init not in ("kan", "efficient"):
            raise ValueError(f"init must be 'kan' or 'efficient', got {init!r}")
        if coef_init not in ("normal", "fit"):
            raise ValueError(f"coef_init must be 'normal' or 'fit', got {coef_init!r}")
        self.coef_init = coef_init
        self.in_features, self.out_features = in_features, out_features
        self.grid_size, self.spline_order = grid_size, spline_order
        self.noise_scale, self.init, self.grid_eps = noise_scale, init, grid_eps
        self.register_buffer("grid", uniform_grid(in_features, grid_size, spline_order, grid_range))
        self.base_weight = nn.Parameter(torch.empty(out_features, in_features))
        self.spline_scale = nn.Parameter(torch.empty(out_features, in_features))
        self.spline_coef = nn.Parameter(torch.empty(out_features, in_features, grid_size + spline_order))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None
        self.base_activation = base_activation()
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        if self.init == "kan":
            nn.init.xavier_uniform_(self.base_weight)
            nn.init.ones_(self.spline_scale)
            if self.coef_init == "normal":
                nn.init.normal_(self.spline_coef, std=self.noise_scale)
            else:
                self._fit_noise()
        else:
            nn.init.kaiming_uniform_(self.base_weight, a=math.sqrt(5))
            nn.init.kaiming_uniform_(self.spline_scale, a=math.sqrt(5))
            self._fit_noise()
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    @torch.no_grad()
    def _fit_noise(self) -> None:
        """``c``: the least-squares spline through uniform noise of size ``noise_scale / G`` at the grid points."""
        k = self.spline_order
        knots = self.grid[:, k:-k].T  # (G + 1, in): the interior grid points
        noise = (torch.rand(knots.shape[0], self.in_features, self.out_features) - 0.5) * self.noise_scale / self.grid_size
        self.spline_coef.copy_(fit_spline_coef(bspline_basis(knots, self.grid, k), noise))

    def basis(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, in) -> (N, in, G + k)`` B-spline bases of each input on its grid."""
        return bspline_basis(x, self.grid, self.spline_order)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        x = x.reshape(-1, self.in_features)
        out = F.linear(self.base_activation(x), self.base_weight)
        coef = self.spline_coef * self.spline_scale.unsqueeze(-1)
        out = out + self.basis(x).flatten(1) @ coef.flatten(1).T
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*lead, self.out_features)

    def edge_activations(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, in) -> (N, out, in)``: every ``phi_{j,i}(x_i)`` (summing over ``in`` gives ``forward``
        without bias); for plotting and tests."""
        base = self.base_activation(x).unsqueeze(1) * self.base_weight
        spline = torch.einsum("nib,oib->noi", self.basis(x), self.spline_coef)
        return base + self.spline_scale * spline

    def _spline_values(self, x: torch.Tensor) -> torch.Tensor:
        """``(N, in, out)``: ``spline_{j,i}(x_i)`` with the current grid (unscaled by ``w_s``)."""
        return torch.einsum("nib,oib->nio", self.basis(x), self.spline_coef)

    @torch.no_grad()
    def update_grid(self, x: torch.Tensor, margin: float = 0.01) -> None:
        """Move the grid to the inputs' distribution and refit ``c`` so each spline keeps its shape
        (Sec. 2.2, "Update of spline grids"): knots at sample quantiles, mixed with a uniform grid
        over the sample range by ``grid_eps``."""
        x = x.reshape(-1, self.in_features)
        values = self._spline_values(x)
        xs = torch.sort(x, dim=0).values
        n, g = xs.shape[0], self.grid_size
        adaptive = xs[torch.linspace(0, n - 1, g + 1, device=x.device).long()]  # (G + 1, in)
        step = (xs[-1] - xs[0] + 2 * margin) / g
        uniform = xs[0] - margin + torch.arange(g + 1, device=x.device, dtype=x.dtype).unsqueeze(1) * step
        inner = self.grid_eps * uniform + (1 - self.grid_eps) * adaptive
        self.grid.copy_(self._extend(inner, step).T)
        self.spline_coef.copy_(fit_spline_coef(self.basis(x), values))

    @torch.no_grad()
    def extend_grid(self, new_grid_size: int, x: torch.Tensor | None = None) -> None:
        """Grid extension (Sec. 2.4): a finer grid on the same interval, with ``c'`` the least-squares fit
        of the fine spline to the coarse one on ``x`` (default: 8 points per new basis function, spread
        over the grid). Parameters change shape: build the optimizer again afterwards, and save the
        model under its new ``grid_size`` (a zoo model's ``model.zoo.model_args`` still holds the old one)."""
        k, g = self.spline_order, self.grid_size
        inner = self.grid[:, k:-k].T  # (G + 1, in)
        pos = torch.linspace(0, g, new_grid_size + 1, device=inner.device)
        i0 = pos.floor().long().clamp(max=g - 1)
        frac = (pos - i0).unsqueeze(1)
        new_inner = inner[i0] * (1 - frac) + inner[i0 + 1] * frac  # refines the current (maybe adaptive) grid
        if x is None:
            t = torch.linspace(0, 1, 8 * (new_grid_size + k), device=inner.device).unsqueeze(1)
            x = inner[0] + t * (inner[-1] - inner[0])
        x = x.reshape(-1, self.in_features)
        values = self._spline_values(x)
        step = (new_inner[-1] - new_inner[0]) / new_grid_size
        self.grid = self._extend(new_inner, step).T.contiguous()
        self.grid_size = new_grid_size
        self.spline_coef = nn.Parameter(fit_spline_coef(self.basis(x), values))

    def _extend(self, inner: torch.Tensor, step: torch.Tensor) -> torch.Tensor:
        """``(G + 1, in)`` interior knots -> ``(G + 2k + 1, in)`` with ``k`` uniform knots on each side."""
        k = self.spline_order
        r = torch.arange(1, k + 1, device=inner.device, dtype=inner.dtype).unsqueeze(1)
        return torch.cat([inner[:1] - r.flip(0) * step, inner, inner[-1:] + r * step], dim=0)

    def extra_repr(self) -> str:
        coef = f", coef_init={self.coef_init!r}" if self.init == "kan" else ""
        return (f"{self.in_features}, {self.out_features}, grid_size={self.grid_size}, "
                f"spline_order={self.spline_order}, init={self.init!r}{coef}, bias={self.bias is not None}")


class KAN(nn.Module):
    """A stack of ``BSplineKANLayer``: ``widths = [n_0, ..., n_L]`` (the paper's ``[n_0, ..., n_L]`` shape).

    ``layer_kw`` goes to every layer (``grid_size``, ``spline_order``, ``grid_range``, ...).

    Grid updates during training (``grid_update_num > 0``): the paper updates each grid "on the fly
    according to its input activations" (Sec. 2.2, "Update of spline grids"); its code, pykan, does it in
    ``fit(update_grid=True, grid_update_num=10, stop_grid_update_step=50)``: every
    ``stop_grid_update_step // grid_update_num`` = 5 steps until step 50. A KAN inside another network
    (a transformer's feed-forward layer) does not own the training loop, so the module follows the same
    schedule itself: every call in training mode with gradients on counts as one step, and on the
    scheduled steps ``update_grid`` runs on that call's inputs before the forward pass. Off by default
    (``grid_update_num=0``): a standalone KAN's owner calls ``update_grid`` when it wants.

    >>> KAN([2, 5, 1])(torch.rand(4, 2)).shape
    torch.Size([4, 1])
    >>> net = KAN([2, 5, 1], grid_update_num=10).train()
    >>> _ = net(torch.linspace(-3, 3, 64).unsqueeze(1).expand(-1, 2))  # step 0: the grid moves to the inputs
    >>> round(float(net.layers[0].grid[0, 3]), 2), round(float(net.layers[0].grid[0, -4]), 2), net.train_steps
    (-3.0, 3.0, 1)
    """

    def __init__(self, widths: Sequence[int], *, grid_update_num: int = 0, stop_grid_update_step: int = 50, **layer_kw):
        super().__init__()
        if len(widths) < 2:
            raise ValueError(f"KAN needs at least an input and an output width, got {list(widths)}")
        if grid_update_num < 0 or (grid_update_num and stop_grid_update_step < grid_update_num):
            raise ValueError(f"need 0 <= grid_update_num <= stop_grid_update_step, got {grid_update_num} and "
                             f"{stop_grid_update_step}")
        self.widths = list(widths)
        self.layers = nn.ModuleList(BSplineKANLayer(a, b, **layer_kw) for a, b in zip(widths[:-1], widths[1:], strict=False))
        self.grid_update_num, self.stop_grid_update_step = grid_update_num, stop_grid_update_step
        self.train_steps = 0  # training-mode calls so far (a plain attribute: not part of the saved weights)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.grid_update_num and self.training and torch.is_grad_enabled():
            every = self.stop_grid_update_step // self.grid_update_num
            if self.train_steps < self.stop_grid_update_step and self.train_steps % every == 0:
                self.update_grid(x)
            self.train_steps += 1
        for layer in self.layers:
            x = layer(x)
        return x

    @torch.no_grad()
    def update_grid(self, x: torch.Tensor) -> None:
        """Update every layer's grid on the activations it receives for inputs ``x`` (any leading shape)."""
        x = x.reshape(-1, self.widths[0])
        for layer in self.layers:
            layer.update_grid(x)
            x = layer(x)

    @torch.no_grad()
    def extend_grid(self, new_grid_size: int, x: torch.Tensor | None = None) -> None:
        """Extend every layer to ``new_grid_size``, fitting on the activations of ``x`` when given."""
        for layer in self.layers:
            nxt = layer(x) if x is not None else None
            layer.extend_grid(new_grid_size, x)
            x = nxt


def kan_param_count(widths: Sequence[int], grid_size: int = 5, spline_order: int = 3, bias: bool = False) -> int:
    """Trainable parameters of ``KAN(widths)``: ``(G + k + 2)`` per edge (+ one bias per output)."""
    edges = sum(a * b for a, b in zip(widths[:-1], widths[1:], strict=False))
    return edges * (grid_size + spline_order + 2) + (sum(widths[1:]) if bias else 0)


# FastKAN (Li 2024, arXiv:2405.06721): b_i(u) = exp(-((u - u_i) / h)^2) on a uniform grid, h = grid step,
# after a LayerNorm, plus a base branch Linear(silu(x)). FasterKAN (Delis 2024, github.com/AthanasiosDelis/
# faster-kan) swaps in the reflectional switch b_i(u) = 1 - tanh((u - u_i) / h)^2 and drops the base branch.
class RBFKANLayer(nn.Module):
    """Radial-basis KAN layer: ``LayerNorm -> b_g(x_i - u_g) -> Linear(in * num_grids, out)`` (+ base).

    Args:
        basis: ``"gaussian"`` (FastKAN) or ``"rswaf"`` (FasterKAN's reflectional switch).
        grid_min, grid_max, num_grids: the centres ``u_g`` (uniform).
        inv_denominator: ``1 / h``; default ``(num_grids - 1) / (grid_max - grid_min)``.
        base_activation: add ``Linear(in, out)(act(x))`` on the raw input (FastKAN); None for none.
        spline_init_std: std of the truncated-normal init of the basis weights (FastKAN: 0.1);
            None for Xavier-uniform (FasterKAN).
        layernorm: normalise inputs before the basis (both papers do).

    State: ``norm``, ``grid`` and ``inv_denominator`` (buffers), ``spline_linear``, ``base_linear``.

    >>> RBFKANLayer(4, 3, basis="rswaf", base_activation=None)(torch.rand(5, 4)).shape
    torch.Size([5, 3])
    """

    def __init__(self, in_features: int, out_features: int, grid_min: float = -2.0, grid_max: float = 2.0,
                 num_grids: int = 8, basis: str = "gaussian", inv_denominator: float | None = None,
                 base_activation: Callable[[], nn.Module] | None = nn.SiLU, spline_init_std: float | None = 0.1,
                 layernorm: bool = True):
        super().__init__()
        if basis not in ("gaussian", "rswaf"):
            raise ValueError(f"basis must be 'gaussian' or 'rswaf', got {basis!r}")
        self.in_features, self.out_features, self.num_grids, self.kind = in_features, out_features, num_grids, basis
        if inv_denominator is None:
            inv_denominator = (num_grids - 1) / (grid_max - grid_min)
        self.norm = nn.LayerNorm(in_features) if layernorm else nn.Identity()
        self.register_buffer("grid", torch.linspace(grid_min, grid_max, num_grids))
        self.register_buffer("inv_denominator", torch.tensor(float(inv_denominator)))
        self.spline_linear = nn.Linear(in_features * num_grids, out_features, bias=False)
        if spline_init_std is None:
            nn.init.xavier_uniform_(self.spline_linear.weight)
        else:
            nn.init.trunc_normal_(self.spline_linear.weight, std=spline_init_std)
        self.base_activation = base_activation() if base_activation is not None else None
        self.base_linear = nn.Linear(in_features, out_features) if base_activation is not None else None

    def basis(self, x: torch.Tensor) -> torch.Tensor:
        """``(..., in) -> (..., in, num_grids)`` basis values of the normalised input."""
        z = (self.norm(x).unsqueeze(-1) - self.grid) * self.inv_denominator
        return torch.exp(-z * z) if self.kind == "gaussian" else 1 - torch.tanh(z) ** 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.spline_linear(self.basis(x).flatten(-2))
        if self.base_linear is not None:
            out = out + self.base_linear(self.base_activation(x))
        return out

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, basis={self.kind!r}, num_grids={self.num_grids}"
