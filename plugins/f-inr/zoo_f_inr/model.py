"""F-INR: a d-dimensional INR factorised into d one-dimensional sub-networks and a tensor decomposition.

Vemuri, Buechner, Denzler, "F-INR: Functional Tensor Decomposition for Implicit Neural
Representations", WACV 2026 (arXiv 2503.21507), Sec. 3. Instead of one network
``Phi: R^d -> R^C``, one small network per axis ``phi_i: R -> R^{C x ...}`` (any INR backbone) maps
its coordinate to the factors of a rank-r tensor decomposition, combined per output channel c:

- CP:     ``Phi_c(x) = sum_k prod_i phi_i(x_i)[c, k]``                       (``phi_i`` -> C x r)
- Tucker: ``Phi_c(x) = G_c x_1 phi_1(x_1)[c] x_2 ... x_d phi_d(x_d)[c]``      (core ``G``: C x r x ... x r)
- TT:     ``Phi_c(x) = phi_1(x_1)[c] phi_2(x_2)[c] ... phi_d(x_d)[c]``        (1 x r, r x r, ..., r x 1 cores)

On a grid the axis networks run once per axis value (``n_1 + ... + n_d`` evaluations instead of
``n_1 * ... * n_d``) and the decomposition is contracted over the grid (``forward_grid``); that is
where the speed comes from, and ``fit`` trains that way whenever the training coordinates form a
full grid (the ``image_fit`` "fit" and video signals).

Backbones of the axis networks (the authors' code): "siren" (sine layers, the first one at
frequency ``w0_first``, the others at ``w0`` = 30, SIREN's initialisation) and "relu_pe"
(positional encoding ``[sin(2^k pi x), cos(2^k pi x)]``, k < ``n_freqs``, then ReLU layers).
The authors train with Adam at 1e-3; their sub-networks have 3 hidden layers of 256 and rank 128
for images. Our choices where the paper is silent: output layers keep PyTorch's default init;
the Tucker core is drawn from N(0, variance r^(-d/2)) and the TT middle cores are scaled by r^(-1/2), so
that the initial outputs stay of order one.

First-layer frequency and the axis resolution (``first_layer_w0``). The authors' ``w0_first`` = 100
is set for images of several hundred pixels per axis. A 1-D SIREN's first layer draws its weights from
U(-1, 1), so its sines reach ``w0_first`` radians per unit of a coordinate in [-1, 1]; an axis of n
samples there resolves at most its Nyquist frequency pi n / 2 (sample spacing 2 / n). SIREN's w0 sets
how many periods the first layer spans over [-1, 1] (Sitzmann et al. 2020, Sec. 3.2), so the same
setting on a coarser axis must scale with n: we keep the first layer at 1/8 of the axis' Nyquist
frequency, ``w0_first = pi n / 16`` (= 100.5 at n = 512, the authors' value; 12.6 at 64 pixels, 6.3 at
32, 3.1 for 16 frames). At 100 on 16-64 samples the first layer alone reaches or passes Nyquist and the
axis networks fit the samples with oscillations between them (7-16 dB on the 2x-finer grid). Training
(``fit``) adds what the authors' constant Adam lacks for long runs: the learning rate decays
exponentially to ``default_lr_decay`` (0.1) of its value over the run (over the steps, or over
``budget_s`` when trained for a time), and the parameters with the lowest training loss seen are kept
(late loss spikes otherwise end a run below its best).
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from zoo.task import run_budget
from zoo_nn.inr import SineLayer

log = logging.getLogger(__name__)

__all__ = ["AxisNet", "FINR", "f_inr", "grid_axes", "first_layer_w0", "DECOMPOSITIONS", "BACKBONES"]

DECOMPOSITIONS = ("cp", "tucker", "tt")
BACKBONES = ("siren", "relu_pe")
_AXES = "xyzuvw"  # einsum letters for grid axes (d <= 6)
_RANKS = "pqstjk"  # einsum letters for rank indices
NYQUIST_FRACTION = 1 / 8  # first-layer frequency / the axis' Nyquist frequency (module docstring)
DEFAULT_RESOLUTION = 64  # samples per axis the defaults are set for: image_fit's 64x64 images


def first_layer_w0(n: int) -> float:
    """The first sine layer's frequency for an axis of ``n`` samples in [-1, 1]: 1/8 of Nyquist, ``pi n / 16``.

    >>> round(first_layer_w0(512), 1), round(first_layer_w0(32), 2)
    (100.5, 6.28)
    """
    if n < 1:
        raise ValueError(f"an axis needs at least one sample, got {n}")
    return NYQUIST_FRACTION * math.pi * n / 2


class AxisNet(nn.Module):
    """One axis' sub-network: a 1-D coordinate (N, 1) -> (N, out) factor entries."""

    def __init__(self, out: int, hidden: int = 64, layers: int = 3, backbone: str = "siren", w0: float = 30.0,
                 w0_first: float = 100.0, n_freqs: int = 10):
        super().__init__()
        if backbone not in BACKBONES:
            raise ValueError(f"unknown F-INR backbone {backbone!r}; choose from {', '.join(BACKBONES)}")
        self.backbone, self.n_freqs = backbone, n_freqs
        if backbone == "siren":
            body: list[nn.Module] = [SineLayer(1, hidden, w0_first, is_first=True)]
            body += [SineLayer(hidden, hidden, w0) for _ in range(layers - 1)]
        else:
            self.register_buffer("freqs", math.pi * 2.0 ** torch.arange(n_freqs, dtype=torch.float32))
            d, body = 2 * n_freqs, []
            for _ in range(layers):
                body += [nn.Linear(d, hidden), nn.ReLU()]
                d = hidden
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(hidden, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.backbone == "relu_pe":
            x = x * self.freqs
            x = torch.cat([torch.sin(x), torch.cos(x)], dim=-1)
        return self.head(self.body(x))


def _equations(decomposition: str, d: int) -> tuple[str, str]:
    """einsum equations (point mode, grid mode) combining d factor tensors (and the Tucker core)."""
    ax, rk = _AXES[:d], _RANKS[:d]
    if decomposition == "cp":
        point = ",".join("ncr" for _ in range(d)) + "->nc"
        grid = ",".join(f"{a}cr" for a in ax) + f"->{ax}c"
    elif decomposition == "tucker":
        point = f"c{rk}," + ",".join(f"nc{r}" for r in rk) + "->nc"
        grid = f"c{rk}," + ",".join(f"{a}c{r}" for a, r in zip(ax, rk, strict=True)) + f"->{ax}c"
    else:  # tt: cores 1 x r, r x r, ..., r x 1 (the unit ranks dropped)
        links = [rk[0]] + [rk[i - 1] + rk[i] for i in range(1, d - 1)] + [rk[d - 2]]
        point = ",".join(f"nc{lk}" for lk in links) + "->nc"
        grid = ",".join(f"{a}c{lk}" for a, lk in zip(ax, links, strict=True)) + f"->{ax}c"
    return point, grid


class FINR(nn.Module):
    """F-INR: ``in_features`` axis networks combined by a CP, Tucker or TT decomposition of rank ``rank``.

    ``forward(coords (N, d)) -> (N, C)`` (point mode, the ``image_fit`` contract);
    ``forward_grid(axis_1 (n_1,), ..., axis_d (n_d,)) -> (n_1, ..., n_d, C)`` (grid mode).

    >>> m = FINR(in_features=3, out_features=3, hidden=8, rank=4)
    >>> m.forward_grid(torch.zeros(2), torch.zeros(5), torch.zeros(6)).shape
    torch.Size([2, 5, 6, 3])
    """

    default_lr = 1e-3
    default_lr_decay = 0.1

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 64, layers: int = 3,
                 rank: int = 32, decomposition: str = "cp", backbone: str = "siren", w0: float = 30.0,
                 w0_first: float | None = None, n_freqs: int = 10,
                 resolution: int | Sequence[int] = DEFAULT_RESOLUTION):
        super().__init__()
        if decomposition not in DECOMPOSITIONS:
            raise ValueError(f"unknown decomposition {decomposition!r}; choose from {', '.join(DECOMPOSITIONS)}")
        if not 2 <= in_features <= len(_AXES):
            raise ValueError(f"F-INR needs 2..{len(_AXES)} input axes, got in_features={in_features}")
        res = [int(resolution)] * in_features if isinstance(resolution, int) else [int(n) for n in resolution]
        if len(res) != in_features:
            raise ValueError(f"resolution needs one sample count per axis ({in_features}), got {list(resolution)}")
        self.d, self.c, self.r, self.decomposition = in_features, out_features, rank, decomposition
        self.resolution = tuple(res)
        # w0_first given: every axis at it (the paper's 100); else scaled with each axis' sample count
        self.w0_first = tuple(float(w0_first) if w0_first is not None else first_layer_w0(n) for n in res)
        shapes = self._factor_shapes()
        self.nets = nn.ModuleList(AxisNet(math.prod(s), hidden, layers, backbone, w0, w, n_freqs)
                                  for s, w in zip(shapes, self.w0_first, strict=True))
        if decomposition == "tucker":
            self.core = nn.Parameter(torch.randn(out_features, *[rank] * in_features) * rank ** (-in_features / 4))
        self.point_eq, self.grid_eq = _equations(decomposition, in_features)

    def _factor_shapes(self) -> list[tuple[int, ...]]:
        c, r, d = self.c, self.r, self.d
        if self.decomposition == "tt":
            return [(c, r)] + [(c, r, r)] * (d - 2) + [(c, r)]
        return [(c, r)] * d

    def factors(self, axes: list[torch.Tensor]) -> list[torch.Tensor]:
        """Each axis network on its coordinates (n_i,) -> (n_i, *factor shape)."""
        shapes = self._factor_shapes()
        out = [net(a.reshape(-1, 1)).reshape(a.shape[0], *s) for net, a, s in zip(self.nets, axes, shapes, strict=True)]
        if self.decomposition == "tt":
            out = [f * self.r ** -0.5 if f.ndim == 4 else f for f in out]
        return out

    def _operands(self, axes: list[torch.Tensor]) -> list[torch.Tensor]:
        fs = self.factors(axes)
        return [self.core, *fs] if self.decomposition == "tucker" else fs

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        if coords.ndim != 2 or coords.shape[1] != self.d:
            raise ValueError(f"F-INR with {self.d} axes takes coords (N, {self.d}), got {tuple(coords.shape)}")
        return torch.einsum(self.point_eq, *self._operands(list(coords.unbind(1))))

    def forward_grid(self, *axes: torch.Tensor) -> torch.Tensor:
        """The values on the full grid ``axes[0] x ... x axes[d-1]``: (n_1, ..., n_d, C)."""
        if len(axes) != self.d:
            raise ValueError(f"F-INR with {self.d} axes takes {self.d} axis vectors, got {len(axes)}")
        return torch.einsum(self.grid_eq, *self._operands(list(axes)))

    def fit(self, signal, *, steps: int | None, budget_s: float | None = None, seed: int = 0,
            progress: str | None = None, lr: float | None = None, lr_decay: float | None = None) -> dict[str, Any]:
        """Full-batch Adam on the MSE, in grid mode when the training coordinates form a full grid.

        The learning rate (``lr``, default ``default_lr``) decays exponentially to ``lr * lr_decay``
        (default ``default_lr_decay``; 1 for none) over the run: over ``steps``, or over ``budget_s``
        when the run is timed. Ends with the parameters of the lowest training loss seen.
        """
        axes = grid_axes(signal.coords)
        if axes is not None and tuple(a.numel() for a in axes) != self.resolution:
            log.warning("F-INR built for %s samples per axis (its first-layer frequencies scale with them) is fitted "
                        "on a %s grid; create it with resolution=%s", self.resolution,
                        tuple(a.numel() for a in axes), tuple(a.numel() for a in axes))
        x, y = signal.coords, signal.values
        target = y.reshape(*[a.numel() for a in axes], -1) if axes is not None else y
        lr = self.default_lr if lr is None else lr
        decay = self.default_lr_decay if lr_decay is None else lr_decay
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        losses: list[float] = []
        best = {"loss": math.inf, "state": None}
        t0 = time.perf_counter()
        self.train()

        def predict() -> torch.Tensor:
            return self.forward_grid(*axes) if axes is not None else self(x)

        def step(i: int) -> float:
            done = max(i / steps if steps else 0.0, (time.perf_counter() - t0) / budget_s if budget_s else 0.0)
            for group in opt.param_groups:
                group["lr"] = lr * decay ** min(done, 1.0)
            loss = torch.mean((predict() - target) ** 2)
            if loss.item() < best["loss"]:  # the parameters this loss belongs to, before the update
                best["loss"], best["state"] = loss.item(), {k: v.detach().clone() for k, v in self.state_dict().items()}
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            return losses[-1]

        out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
        with torch.no_grad():
            final = float(torch.mean((predict() - target) ** 2))
        if best["state"] is not None and best["loss"] < final:
            self.load_state_dict(best["state"])
        self.eval()
        return {**out, "losses": losses, "grid_mode": axes is not None, "kept_loss": min(final, best["loss"])}


def grid_axes(coords: torch.Tensor) -> list[torch.Tensor] | None:
    """The per-axis values if ``coords`` (N, d) is a full row-major grid (the last axis fastest), else None.

    >>> from zoo_task_image_fit.image_fit import coord_grid
    >>> [a.tolist() for a in grid_axes(coord_grid(2, 3))]
    [[-0.5, 0.5], [-0.6666666269302368, 0.0, 0.6666666269302368]]
    """
    axes = [torch.unique(coords[:, i]) for i in range(coords.shape[1])]
    if math.prod(a.numel() for a in axes) != coords.shape[0]:
        return None
    mesh = torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1).reshape(-1, coords.shape[1])
    return axes if torch.equal(mesh, coords) else None


def f_inr(in_features: int = 2, out_features: int = 1, hidden: int = 64, layers: int = 3, rank: int = 32,
          decomposition: str = "cp", backbone: str = "siren", w0: float = 30.0, w0_first: float | None = None,
          n_freqs: int = 10, resolution: int | Sequence[int] = DEFAULT_RESOLUTION) -> FINR:
    """F-INR (defaults: SIREN axis networks of 3 layers x 64, rank 32; the paper: 3 x 256, rank 16-128).

    ``resolution``: samples per axis of the signal to fit (one int for all axes, or one per axis);
    the first sine layer of each axis runs at ``first_layer_w0(n)`` unless ``w0_first`` is given
    (the authors': 100, for images of several hundred pixels per axis).

    >>> f_inr(hidden=8, rank=4)(torch.zeros(5, 2)).shape
    torch.Size([5, 1])
    >>> [round(w, 2) for w in f_inr(in_features=3, hidden=8, rank=4, resolution=(16, 32, 32)).w0_first]
    [3.14, 6.28, 6.28]
    """
    return FINR(in_features, out_features, hidden, layers, rank, decomposition, backbone, w0, w0_first, n_freqs,
                resolution)

