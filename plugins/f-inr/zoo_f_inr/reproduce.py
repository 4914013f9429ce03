"""``zoo reproduce f-inr``: F-INR vs monolithic SIREN and ReLU+FF on the 16-frame video, equal parameters.

The signal is ``image_fit.make_video_signal()`` (16 frames of 32x32 crops panning across astronaut,
coordinates (t, y, x)). F-INR (``finr_cp``, plus ``finr_tucker`` and ``finr_tt`` for reference) trains
on the grid (its ``fit`` rule: each axis network on its 16 / 32 / 32 values, then the tensor
contraction); the task's SIREN and ReLU+FF baselines, sized to ``finr_cp``'s parameter count, train
on all 16384 points. Full-batch Adam on the MSE for all, each at its own learning rate.

The runs are interleaved in one process: every tick, each baseline takes 1 step, ``finr_cp`` 40
steps (about the baselines' wall-clock in all: the comparison is at equal time) and the reference
Tucker/TT models 10 steps (``PER_TICK``); only the steps are timed
(``time.perf_counter`` and ``time.process_time``). The training PSNR is measured (untimed) every
``EVAL_EVERY`` ticks.

Passed when, against both baselines, ``finr_cp`` (1) takes less time per step and (2) reaches the
baseline's final training PSNR in less wall time than the baseline took (equivalently: equal or
higher PSNR at equal wall-clock).
"""
from __future__ import annotations

import logging
import math
import time

import torch

import zoo
from zoo.task import count_params
from zoo_task_image_fit import image_fit as task

from .model import grid_axes

log = logging.getLogger(__name__)

CLAIM = ("F-INR trains faster per step than a monolithic SIREN / ReLU+FF of equal size on the 16-frame video and "
         "reaches their PSNR in less wall time")
FRAMES, SIZE, TICKS, EVAL_EVERY = 16, 32, 300, 10
PER_TICK = {"finr_cp": 40, "finr_tucker": 10, "finr_tt": 10, "siren": 1, "relu-ff": 1}
QUICK = (4, 8, 4, 2)
FINR_MODELS = ("finr_cp", "finr_tucker", "finr_tt")


class _Run:
    """One model's training, one step at a time (grid mode for F-INR, all points for the baselines)."""

    def __init__(self, model: torch.nn.Module, signal: task.ImageSignal, grid: bool):
        self.model, self.signal = model, signal
        self.axes = grid_axes(signal.coords) if grid else None
        self.target = signal.values.reshape(signal.shape) if grid else signal.values
        self.opt = torch.optim.Adam(model.parameters(), lr=model.default_lr)
        self.steps, self.wall, self.cpu = 0, 0.0, 0.0
        self.curve: list[tuple[float, float, float]] = []  # (wall, cpu, psnr)

    def step(self, n: int = 1) -> None:
        w, c = time.perf_counter(), time.process_time()
        for _ in range(n):
            pred = self.model.forward_grid(*self.axes) if self.axes is not None else self.model(self.signal.coords)
            loss = torch.mean((pred - self.target) ** 2)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
        self.wall += time.perf_counter() - w
        self.cpu += time.process_time() - c
        self.steps += n

    def record(self) -> float:
        p = task.psnr(task.predict(self.model, self.signal.coords).clamp(0, 1), self.signal.values)
        self.curve.append((self.wall, self.cpu, p))
        return p

    def time_to(self, psnr: float) -> tuple[float, float]:
        """(wall, cpu) seconds at the first evaluation at or above ``psnr``; inf if never."""
        return next(((w, c) for w, c, p in self.curve if p >= psnr), (math.inf, math.inf))

    def psnr_at(self, wall: float) -> float:
        """Training PSNR at the last evaluation within ``wall`` seconds of training."""
        return max((p for w, _, p in self.curve if w <= wall), default=-math.inf)


def reproduce(quick: bool = False, seed: int = 0) -> zoo.ClaimResult:
    """Interleave the F-INRs and both baselines; pass if finr_cp is faster per step and reaches each
    baseline's final PSNR sooner (wall clock)."""
    t0, c0 = time.perf_counter(), time.process_time()
    frames, size, ticks, every = QUICK if quick else (FRAMES, SIZE, TICKS, EVAL_EVERY)
    signal = task.make_video_signal(frames=frames, size=size)
    runs: dict[str, _Run] = {}
    for name in FINR_MODELS:
        torch.manual_seed(seed)
        runs[name] = _Run(zoo.create(name, in_features=3, out_features=signal.channels), signal, grid=True)
    params = count_params(runs["finr_cp"].model)
    for b in ("siren", "relu-ff"):
        runs[b] = _Run(task.build_baseline(b, params=params, data=signal, seed=seed), signal, grid=False)
    for i in range(ticks):
        for name, run in runs.items():
            run.step(PER_TICK[name])
        if (i + 1) % every == 0 or i + 1 == ticks:
            for run in runs.values():
                run.record()
    table: dict[str, dict[str, float]] = {}
    for name, run in runs.items():
        table[name] = {"params": float(count_params(run.model)), "steps": float(run.steps),
                       "seconds_per_step": run.wall / run.steps, "cpu_per_step": run.cpu / run.steps,
                       "wall_s": run.wall, "cpu_s": run.cpu, **task.score(run.model, signal),
                       "best_psnr_train": max(p for _, _, p in run.curve)}
    ours, checks, parts = runs["finr_cp"], {}, []
    for b in ("siren", "relu-ff"):
        base = runs[b]
        target = base.curve[-1][2]
        wall_to, cpu_to = ours.time_to(target)
        faster_step = table["finr_cp"]["seconds_per_step"] < table[b]["seconds_per_step"]
        sooner = wall_to < base.wall
        table["finr_cp"][f"wall_to_{b}_psnr"] = wall_to
        table["finr_cp"][f"psnr_at_{b}_wall"] = ours.psnr_at(base.wall)
        checks[b] = faster_step and sooner
        parts.append(f"vs {b}: {table[b]['seconds_per_step'] / table['finr_cp']['seconds_per_step']:.1f}x faster per "
                     f"step; {b} ends at {target:.2f} dB after {base.wall:.1f} s, F-INR "
                     + (f"reaches it after {wall_to:.1f} s" if math.isfinite(wall_to) else
                        f"never reaches it (best {max(p for _, _, p in ours.curve):.2f} dB in {ours.wall:.1f} s)")
                     + f" -> {'yes' if checks[b] else 'NO'}")
    summary = "; ".join(parts) + (f"; finr_cp held-out (2x spatial grid) PSNR {table['finr_cp']['psnr_test']:.2f} dB vs "
                                  f"SIREN {table['siren']['psnr_test']:.2f} dB (reported)")
    return zoo.ClaimResult(plugin="f-inr", claim=CLAIM, passed=all(checks.values()), table=table, summary=summary,
                           settings={"frames": frames, "size": size, "ticks": ticks,
                                     "steps": {k: ticks * v for k, v in PER_TICK.items()}, "eval_every_ticks": every,
                                     "seed": seed,
                                     "quick": quick, "torch_threads": torch.get_num_threads(),
                                     "wall_s": time.perf_counter() - t0, "process_time_s": time.process_time() - c0},
                           seconds=time.perf_counter() - t0)
