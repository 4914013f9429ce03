"""``zoo reproduce doh-hypernet``: D'OH's memory / PSNR trade-off through the latent size alone.

Every one of the 20 held-out 25x25 faces of ``signal_set_fit`` (``load_set("faces")``) is fitted on
its own (D'OH uses no offline data) by D'OH over the same target SIREN (3 sine layers of width 32,
2,241 parameters) with latent sizes m in {64, 128, 256, 512, 1024}, 300 Adam steps on the latent
each. Memory per signal = 4 m bytes of float32 latent + an 8-byte seed (the projections are
regenerated from it). Next to it, as the paper does, SIRENs of about m parameters trained directly
(same steps; Adam 1e-3) store 4 x params bytes. Pass: D'OH's PSNR rises strictly with its memory
(a monotone trade-off controlled by m alone, with the target architecture unchanged).
"""
from __future__ import annotations

import math
import time

import torch
from torch import nn

import zoo
from zoo_task_image_fit import signal_set as task
from zoo_task_image_fit.image_fit import psnr

from .model import siren_shapes

CLAIM = ("the memory footprint of an INR varies through D'OH's latent dimension alone: held-out faces' PSNR rises "
         "monotonically with the bytes stored (same target SIREN), reported next to directly trained SIRENs")
LATENTS, QUICK_LATENTS = (64, 128, 256, 512, 1024), (8, 16)
STEPS, QUICK_STEPS = 300, 3


class DirectSirens(nn.Module):
    """B independent SIRENs (3 sine layers of width ``hidden``), trained directly, evaluated in one batch."""

    def __init__(self, n: int, hidden: int, layers: int = 3, w0: float = 30.0):
        super().__init__()
        self.w0, self.ws, self.bs = w0, nn.ParameterList(), nn.ParameterList()
        for i, (fo, fi) in enumerate(siren_shapes(2, hidden, layers, 1)):
            wb = 1.0 / fi if i == 0 else math.sqrt(6.0 / fi) / w0
            self.ws.append(nn.Parameter(torch.empty(n, fo, fi).uniform_(-wb, wb)))
            self.bs.append(nn.Parameter(torch.empty(n, fo).uniform_(-1 / math.sqrt(fi), 1 / math.sqrt(fi))))

    def per_signal_params(self) -> int:
        return sum(w[0].numel() + b[0].numel() for w, b in zip(self.ws, self.bs, strict=True))

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        h = coords.unsqueeze(0).expand(self.ws[0].shape[0], -1, -1)
        for w, b in zip(self.ws[:-1], self.bs[:-1], strict=True):
            h = torch.sin(self.w0 * (torch.bmm(h, w.transpose(1, 2)) + b.unsqueeze(1)))
        return torch.bmm(h, self.ws[-1].transpose(1, 2)) + self.bs[-1].unsqueeze(1)


def _siren_width(params: int) -> int:
    # parameters of 3 sine layers + head at width h: 3h + 2(h^2 + h) + h + 1
    return min(range(1, 256), key=lambda h: abs(3 * h + 2 * (h * h + h) + h + 1 - params))


def _direct(x: torch.Tensor, params: int, steps: int) -> dict[str, float]:
    b, h, w, c = x.shape
    coords, y = task.coord_grid(h, w), x.reshape(b, h * w, c)
    net = DirectSirens(b, _siren_width(params))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(steps):
        loss = ((net(coords) - y) ** 2).mean(dim=(1, 2)).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    with torch.no_grad():
        rec = net(coords).clamp(0, 1)
    p = net.per_signal_params()
    return {"latent_or_params": float(p), "bytes_per_signal": float(4 * p), "psnr": psnr(rec, y),
            "mse": float(torch.mean((rec - y) ** 2))}


def reproduce(quick: bool = False, seed: int = 0) -> zoo.ClaimResult:
    """Fit every held-out face with D'OH at each latent size (and direct SIRENs); pass if PSNR rises with memory."""
    t0, c0 = time.perf_counter(), time.process_time()
    latents, steps = (QUICK_LATENTS, QUICK_STEPS) if quick else (LATENTS, STEPS)
    sset = task.load_set("faces", 25, seed=seed)
    x = sset.test[:2] if quick else sset.test
    table: dict[str, dict[str, float]] = {}
    for m in latents:
        torch.manual_seed(seed)
        model = zoo.create("doh_siren", latent_dim=m, inner_steps=steps, seed=seed)
        rec = model.reconstruct(x).clamp(0, 1)
        table[f"doh m={m}"] = {"latent_or_params": float(m), "bytes_per_signal": float(model.memory_bytes()),
                               "psnr": psnr(rec, x), "mse": float(torch.mean((rec - x) ** 2)),
                               "target_params": float(model.target_params)}
    for m in latents:
        torch.manual_seed(seed)
        row = _direct(x, m, steps)
        table[f"siren ~{m} params"] = row
    doh = [table[f"doh m={m}"]["psnr"] for m in latents]
    passed = all(b > a for a, b in zip(doh[:-1], doh[1:], strict=True))
    pairs = ", ".join(f"{table[f'doh m={m}']['bytes_per_signal']:.0f} B: {p:.2f} dB" for m, p in zip(latents, doh,
                                                                                                    strict=True))
    sir = ", ".join(f"{table[f'siren ~{m} params']['bytes_per_signal']:.0f} B: {table[f'siren ~{m} params']['psnr']:.2f} dB"
                    for m in latents)
    summary = (f"D'OH PSNR vs bytes per signal ({'monotone' if passed else 'not monotone'}): {pairs}; directly "
               f"trained SIRENs: {sir}")
    return zoo.ClaimResult(plugin="doh-hypernet", claim=CLAIM, passed=bool(passed), table=table, summary=summary,
                           settings={"dataset": "faces", "size": 25, "signals": len(x), "steps": steps,
                                     "latents": list(latents), "seed": seed, "quick": quick,
                                     "cpu_seconds": time.process_time() - c0},
                           seconds=time.perf_counter() - t0)
