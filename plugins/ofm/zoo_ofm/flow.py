"""Functional flow matching: a GP reference measure flowed to the data functions by a learned velocity operator.

Shi, Ross, Asimaki, Azizzadenesheli, "Stochastic Process Learning via Operator Flow Matching" (2025), Sec. 3.
The reference measure nu_0 is a Gaussian process; a coupling pi(f_0, f_1) of reference and data functions
(a mini-batch optimal-transport coupling, the paper's "marginal OT") defines the straight path

    f_t = (1 - t) f_0 + t f_1,        target velocity  f_1 - f_0,

and a neural operator G_theta(t, f_t) regresses the target: L = E_{t, (f_0, f_1)} ||G_theta(t, f_t) - (f_1 - f_0)||^2,
the L2(D) norm discretised on the functions' points (mean over points). Sampling integrates df/dt = G_theta(t, f)
from a reference sample at any finite point set; the flow is invertible, so a posterior over function values
given noisy observations is a posterior over the reference GP's values, sampled by SGLD in that (whitened)
latent space (Sec. 3.3, "universal functional regression").

This module holds the training rule, the reference, the ODE sampler and the SGLD regression once, for any
velocity network ``velocity(f_t (B, N, C), coords (B, N, d), t (B,)) -> (B, N, C)``: OFM's spectral operator
(``zoo_ofm.model``) and MINO's GNO/attention network (``zoo_mino``) both train through ``FunctionalFlow``.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import nn

__all__ = ["GPReference", "FunctionalFlow", "flow_matching_loss", "ot_pairing"]


class GPReference:
    """A zero-mean GP on [0, 1]^d: ``kernel`` "rbf" or "matern" (nu 0.5, 1.5, 2.5), ``lengthscale``, ``variance``.

    Covariances are built and factored in float64 with ``jitter * variance`` on the diagonal (RBF covariances
    on dense points are numerically singular).

    >>> ref = GPReference("rbf", lengthscale=0.2)
    >>> x = torch.linspace(0, 1, 5).unsqueeze(-1)
    >>> ref.sample(x.expand(3, 5, 1), channels=1, generator=torch.Generator().manual_seed(0)).shape
    torch.Size([3, 5, 1])
    """

    def __init__(self, kernel: str = "matern", *, lengthscale: float = 0.1, variance: float = 1.0, nu: float = 2.5,
                 jitter: float = 1e-6):
        if kernel not in ("rbf", "matern"):
            raise ValueError(f"GPReference kernel must be 'rbf' or 'matern', got {kernel!r}")
        if kernel == "matern" and nu not in (0.5, 1.5, 2.5):
            raise ValueError(f"GPReference matern nu must be 0.5, 1.5 or 2.5, got {nu}")
        self.kernel, self.lengthscale, self.variance, self.nu, self.jitter = kernel, lengthscale, variance, nu, jitter

    def cov(self, coords: torch.Tensor) -> torch.Tensor:
        """``coords (..., N, d)`` -> the covariance ``(..., N, N)`` in float64, jitter included."""
        x = coords.double()
        r = torch.cdist(x, x) / self.lengthscale
        if self.kernel == "rbf":
            k = torch.exp(-0.5 * r ** 2)
        elif self.nu == 0.5:
            k = torch.exp(-r)
        elif self.nu == 1.5:
            k = (1 + math.sqrt(3) * r) * torch.exp(-math.sqrt(3) * r)
        else:
            k = (1 + math.sqrt(5) * r + 5.0 / 3.0 * r ** 2) * torch.exp(-math.sqrt(5) * r)
        eye = torch.eye(x.shape[-2], dtype=torch.float64)
        return self.variance * (k + self.jitter * eye)

    def chol(self, coords: torch.Tensor) -> torch.Tensor:
        """Lower Cholesky factor ``L`` (float32) with ``L L^T`` the covariance at ``coords``."""
        return torch.linalg.cholesky(self.cov(coords)).float()

    def sample(self, coords: torch.Tensor, channels: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Independent reference functions at ``coords (B, N, d)``: ``(B, N, channels)``."""
        noise = torch.randn(*coords.shape[:-1], channels, generator=generator)
        return self.chol(coords) @ noise

    def config(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "lengthscale": self.lengthscale, "variance": self.variance, "nu": self.nu,
                "jitter": self.jitter}


def ot_pairing(chol: torch.Tensor, white: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The mini-batch OT coupling: a permutation ``p`` minimising ``sum_j ||L_j w_{p(j)} - f1_j||^2``.

    ``chol (B, N, N)`` factors the reference covariance at data function j's points, ``white (B, N, C)`` are
    white-noise draws (reference function k at j's points is ``L_j w_k``), ``target (B, N, C)`` the data. With
    per-function point sets the squared L2 distance is taken on j's points (mean over points).
    """
    with torch.no_grad():
        cand = torch.einsum("jnm,kmc->jknc", chol, white)  # reference function k evaluated on j's points
        cost = (cand - target.unsqueeze(1)).pow(2).mean(dim=(2, 3))
        _, cols = linear_sum_assignment(cost.double().numpy())
    return torch.as_tensor(cols, dtype=torch.long)


def flow_matching_loss(velocity: Callable[..., torch.Tensor], f0: torch.Tensor, f1: torch.Tensor,
                       coords: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """The conditional flow-matching loss on the straight path: mean ||v(f_t, x, t) - (f1 - f0)||^2.

    Zero exactly when ``velocity`` returns ``f1 - f0`` on every pair (see the tests' toy case).
    """
    tt = t.view(-1, 1, 1)
    ft = (1 - tt) * f0 + tt * f1
    return (velocity(ft, coords, t) - (f1 - f0)).pow(2).mean()


class FunctionalFlow(nn.Module):
    """A functional generative model: ``velocity`` + a GP reference, trained by flow matching (contract "generative").

    ``fit(values (n, N, C), coords (n, N, d) or (N, d))`` trains; ``sample(coords (N, d), n)`` integrates the
    learned ODE from reference samples at those points (any N, any point set); ``condition`` samples the
    posterior of the values at query points given noisy observations by SGLD in the reference's latent space.
    ``forward(values, coords, t)`` is the velocity field. Values are standardised by one scalar mean and scale
    fitted on the training data (buffers, saved with the weights).

    Args:
        velocity: the velocity operator ``(f_t (B, N, C), coords (B, N, d), t (B,)) -> (B, N, C)``.
        channels: C, channels of the functions.
        reference: the GP reference's settings (``GPReference`` arguments).
        coupling: "ot" (mini-batch optimal transport, the paper's) or "independent".
        lr, batch_size, ode_steps: Adam's initial learning rate (cosine decay to 0 over the steps), functions per
            step, midpoint steps of the sampler.
    """

    input_kind = "generative"

    def __init__(self, velocity: nn.Module, *, channels: int = 1, reference: dict[str, Any] | None = None,
                 coupling: str = "ot", lr: float = 1e-3, batch_size: int = 32, ode_steps: int = 16):
        super().__init__()
        if coupling not in ("ot", "independent"):
            raise ValueError(f"coupling must be 'ot' or 'independent', got {coupling!r}")
        self.velocity = velocity
        self.channels, self.coupling, self.lr, self.batch_size, self.ode_steps = channels, coupling, lr, batch_size, ode_steps
        self.reference = GPReference(**(reference or {}))
        self.register_buffer("shift", torch.zeros(()))
        self.register_buffer("scale", torch.ones(()))

    def forward(self, values: torch.Tensor, coords: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        """The velocity at time ``t (B,)`` (0 when omitted: the reference end) of the standardised ``values``."""
        if t is None:
            t = torch.zeros(values.shape[0])
        return self.velocity(values, coords, t)

    # ---- training --------------------------------------------------------------------------------------
    def fit(self, values: torch.Tensor | np.ndarray, coords: torch.Tensor | np.ndarray, *, steps: int | None = 1000,
            seed: int = 0, progress: Callable[[int, float], None] | bool | None = None,
            budget_s: float | None = None) -> dict[str, float]:
        """Flow matching on ``values (n, N, C)`` at ``coords (n, N, d)`` (or shared ``(N, d)``) with Adam, for
        ``steps`` steps or until ``budget_s`` seconds have passed (whichever comes first; one of them is needed)."""
        if steps is None and budget_s is None:
            raise ValueError("fit needs steps or budget_s")
        values = torch.as_tensor(np.asarray(values), dtype=torch.float32)
        coords = torch.as_tensor(np.asarray(coords), dtype=torch.float32)
        if values.ndim != 3 or values.shape[-1] != self.channels:
            raise ValueError(f"fit expects values (n, N, {self.channels}), got {tuple(values.shape)}")
        shared = coords.ndim == 2  # one point set for every function: one covariance factor, one graph
        if shared:
            coords = coords.expand(values.shape[0], *coords.shape)
        if coords.shape[:2] != values.shape[:2]:
            raise ValueError(f"coords {tuple(coords.shape)} do not match values {tuple(values.shape)}")
        self.shift.fill_(float(values.mean()))
        self.scale.fill_(float(values.std()) or 1.0)
        data = (values - self.shift) / self.scale
        gen = torch.Generator().manual_seed(seed)
        opt = torch.optim.Adam(self.velocity.parameters(), lr=self.lr)
        # cosine decay to 0 over `steps` (as the task's operator training), so the last weights are not those of a
        # noisy constant-rate phase; constant under a time budget alone
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps) if steps else None
        self.train()
        start, losses = time.perf_counter(), []
        shared_chol = self.reference.chol(coords[:1]) if shared else None
        step = 0
        while (steps is None or step < steps) and (budget_s is None or time.perf_counter() - start < budget_s):
            idx = torch.randint(0, data.shape[0], (min(self.batch_size, data.shape[0]),), generator=gen)
            f1 = data[idx]
            if shared:
                x = coords[: len(idx)]  # an expanded view (stride 0), so velocities may share per-point-set work
                chol = shared_chol.expand(len(idx), -1, -1)
            else:
                x = coords[idx]
                chol = self.reference.chol(x)
            white = torch.randn(f1.shape, generator=gen)
            if self.coupling == "ot":
                white = white[ot_pairing(chol, white, f1)]
            f0 = chol @ white
            t = torch.rand(f1.shape[0], generator=gen)
            loss = flow_matching_loss(self.velocity, f0, f1, x, t)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.velocity.parameters(), 1.0)
            opt.step()
            if sched is not None:
                sched.step()
            losses.append(float(loss.detach()))
            if callable(progress):
                progress(step, losses[-1])
            step += 1
        self.eval()
        tail = losses[-max(1, step // 10):] if losses else [math.nan]
        return {"loss": float(np.mean(tail)), "steps": float(step), "fit_seconds": time.perf_counter() - start}

    # ---- sampling --------------------------------------------------------------------------------------
    def _flow(self, f: torch.Tensor, coords: torch.Tensor, steps: int) -> torch.Tensor:
        """Integrate df/dt = G(t, f) from t=0 to 1 with the explicit midpoint rule (``steps`` steps)."""
        h = 1.0 / steps
        for k in range(steps):
            t = torch.full((f.shape[0],), k * h)
            mid = f + 0.5 * h * self.velocity(f, coords, t)
            f = f + h * self.velocity(mid, coords, t + 0.5 * h)
        return f

    @torch.no_grad()
    def sample(self, coords: torch.Tensor | np.ndarray, n: int, *, seed: int = 0, chunk: int = 256) -> torch.Tensor:
        """``n`` functions of the learned process at ``coords (N, d)``: ``(n, N, C)``."""
        coords = torch.as_tensor(np.asarray(coords), dtype=torch.float32)
        gen = torch.Generator().manual_seed(seed)
        chol = self.reference.chol(coords)
        out = []
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            f0 = chol @ torch.randn(m, coords.shape[0], self.channels, generator=gen)
            out.append(self._flow(f0, coords.expand(m, *coords.shape), self.ode_steps))
        return torch.cat(out) * self.scale + self.shift

    # ---- functional regression -------------------------------------------------------------------------
    def condition(self, obs_coords: torch.Tensor | np.ndarray, obs_values: torch.Tensor | np.ndarray,
                  query_coords: torch.Tensor | np.ndarray, n: int, *, seed: int = 0, noise: float = 0.05,
                  sgld_steps: int = 300, step_size: float | None = None, ode_steps: int = 8) -> torch.Tensor:
        """Posterior samples at ``query_coords (M, d)`` given ``obs_values (No, C)`` at ``obs_coords (No, d)``.

        The paper's regression (Sec. 3.3) in these steps: (1) stack the points P = obs + query; (2) the latent
        reference values are z = L eps on P, eps ~ N(0, I) (L the reference's Cholesky factor), and the
        process values are u = T(z), T the learned flow (``ode_steps`` midpoint steps, differentiated through);
        (3) log p(eps | y) = -|eps|^2 / 2 - |u_obs - y|^2 / (2 noise^2) + const, exact because T is a bijection
        and the prior of eps is standard normal; (4) ``n`` SGLD chains eps <- eps + (a_k / 2) grad log p +
        sqrt(a_k) xi, with a_k = step_size (1 + k / 50)^-0.55 (Welling & Teh's polynomial decay; step_size
        defaults to 0.5 noise^2 in standardised units, below the likelihood's curvature); (5) the last
        state of each chain is pushed through T and its query part returned, ``(n, M, C)``.
        """
        obs_coords = torch.as_tensor(np.asarray(obs_coords), dtype=torch.float32)
        query_coords = torch.as_tensor(np.asarray(query_coords), dtype=torch.float32)
        y = (torch.as_tensor(np.asarray(obs_values), dtype=torch.float32).reshape(obs_coords.shape[0], -1)
             - self.shift) / self.scale
        pts = torch.cat([obs_coords, query_coords])
        n_obs = obs_coords.shape[0]
        chol = self.reference.chol(pts)
        gen = torch.Generator().manual_seed(seed)
        eps = torch.randn(n, pts.shape[0], self.channels, generator=gen)
        x = pts.expand(n, *pts.shape)
        sigma2 = (noise / float(self.scale)) ** 2
        step_size = 0.5 * sigma2 if step_size is None else step_size
        for p in self.velocity.parameters():
            p.requires_grad_(False)
        try:
            for k in range(sgld_steps):
                eps.requires_grad_(True)
                u = self._flow(chol @ eps, x, ode_steps)
                logp = -0.5 * eps.pow(2).sum() - (u[:, :n_obs] - y).pow(2).sum() / (2 * sigma2)
                (grad,) = torch.autograd.grad(logp, eps)
                a = step_size * (1 + k / 50) ** -0.55
                eps = (eps.detach() + 0.5 * a * grad + math.sqrt(a) * torch.randn(eps.shape, generator=gen)).detach()
            with torch.no_grad():
                u = self._flow(chol @ eps, x, self.ode_steps)
        finally:
            for p in self.velocity.parameters():
                p.requires_grad_(True)
        return u[:, n_obs:] * self.scale + self.shift
