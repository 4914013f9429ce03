"""Learnable Task Vector (LTV; Saglam, Hu, Yang, Kalogerias and Karbasi, Findings of ACL 2025, arXiv:2502.05390).

The method (§3, read from the abstract and the paper's summary; the full text was not available here): with the
model frozen, every attention head (l, h) has its mean output at the last position over in-context prompts of the
task, ``abar[l, h]`` (mapped into the residual stream through the head's slice of the output projection); the task
vector is a per-layer weighted sum

    theta_l = sum_h alpha[l, h] * abar[l, h],        l = 1..L,

added to the output of layer l at the last position of a prompt, and the weights ``alpha`` are optimised by gradient
descent on the task loss of the model's output with the vector injected ("causal optimisation"): cross-entropy of
the answer token, or the squared error for functional regression. Only ``alpha`` (L x H numbers per task) is learned.

As in the authors' code, ``alpha`` starts from N(0, 1) (redrawn by ``fit`` from its seed) and the vector of layer l
is added to that layer's output at the last position. Choices of ours where the summary is silent: ``alpha`` is
fitted with Adam (lr ``LR``, ``STEPS`` steps, batches of ``BATCH``) on the task's
zero-shot and corrupted (shuffled-label) fit prompts, half each; the head means come from the task's clean
``shots``-shot prompts; one ``alpha`` per task. The paper works on GPT-2/GPT-J/Llama scale models (its defaults:
``PAPER``); here the toy GPTs of ``icl_toy``.
"""
from __future__ import annotations

import time
from typing import Any

import torch
from torch import nn

from zoo_task_icl_toy.gpt import HookedGPT
from zoo_task_icl_toy.interventions import ICLData, TaskVectorModel, answer_loss, task_head_means

LR = 0.02
STEPS = 300
BATCH = 64
PAPER: dict[str, Any] = {"models": "GPT-2, GPT-J, Llama (frozen)", "alpha": "one weight per head, per layer",
                         "objective": "task loss with the vector injected"}


class LearnableTaskVector(TaskVectorModel):
    """LTV on an ``icl_toy`` GPT: ``alpha`` (n_tasks, depth, heads) learned, ``head_means`` fixed by ``fit``.

    ``additions(task)[:, l + 1] = sum_h alpha[task, l, h] * head_means[task, l, h]``: layer l's vector enters the
    residual stream right after block l (slot 0, before block 0, stays empty).

    >>> ltv = LearnableTaskVector(n_tasks=8, depth=4, dim=64, heads=4)
    >>> tuple(ltv.alpha.shape), tuple(ltv.head_means.shape)
    ((8, 4, 4), (8, 4, 4, 64))
    """

    def __init__(self, n_tasks: int = 8, depth: int = 4, dim: int = 64, heads: int = 4, steps: int = STEPS,
                 lr: float = LR, batch: int = BATCH):
        super().__init__(n_tasks, depth, dim)
        if steps < 0 or lr <= 0 or batch < 1:
            raise ValueError(f"steps must be >= 0, lr > 0 and batch >= 1; got steps={steps}, lr={lr}, batch={batch}")
        self.heads, self.steps, self.lr, self.batch = int(heads), int(steps), float(lr), int(batch)
        self.alpha = nn.Parameter(torch.randn(n_tasks, depth, heads))
        self.register_buffer("head_means", torch.zeros(n_tasks, depth, heads, dim))

    def layer_vectors(self, task: torch.Tensor) -> torch.Tensor:
        """theta_l for each prompt's task: (B, depth, dim)."""
        return torch.einsum("blh,blhd->bld", self.alpha[task], self.head_means[task])

    def additions(self, task: torch.Tensor) -> torch.Tensor:
        theta = self.layer_vectors(task)
        return torch.cat([torch.zeros_like(theta[:, :1]), theta], 1)

    def fit(self, gpt: HookedGPT, data: ICLData, *, steps: int | None = None, budget_s: float | None = None,
            seed: int = 0, **options: Any) -> dict[str, float]:
        """Set ``head_means`` from ``data.clean``, draw ``alpha ~ N(0, 1)`` (seeded) and optimise it on zero-shot and
        corrupted prompts."""
        self.check(gpt, data)
        if gpt.heads != self.heads:
            raise ValueError(f"LearnableTaskVector was built for heads={self.heads}; this GPT has {gpt.heads}")
        steps = self.steps if steps is None else int(steps)
        self.head_means.copy_(task_head_means(gpt, data.clean, self.n_tasks))
        g = torch.Generator().manual_seed(20_011 + seed)
        with torch.no_grad():
            self.alpha.copy_(torch.randn(self.alpha.shape, generator=g))
        pools = [data.zero, data.corrupt]
        opt = torch.optim.Adam([self.alpha], lr=self.lr)
        t0, losses, i = time.perf_counter(), [], 0
        while i < steps and (budget_s is None or time.perf_counter() - t0 < budget_s):
            loss = 0.0
            for pool in pools:
                idx = torch.randint(len(pool), (min(self.batch, len(pool)),), generator=g)
                out = self(gpt, pool.inputs[idx], pool.task[idx])[:, -1]
                loss = loss + answer_loss(out, pool.targets[idx], data.kind) / len(pools)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            i += 1
        tail = losses[-max(1, len(losses) // 10):] if losses else [float("nan")]
        return {"fit_steps": float(i), "fit_loss": sum(tail) / len(tail),
                "alpha_abs_mean": float(self.alpha.detach().abs().mean())}


def learnable_task_vector(*, n_tasks: int = 8, depth: int = 4, dim: int = 64, heads: int = 4, steps: int = STEPS,
                          lr: float = LR, batch: int = BATCH) -> LearnableTaskVector:
    """LTV for ``icl_toy``'s token GPT (its sizes are the defaults; ``n_tasks=4`` for the regression GPT)."""
    return LearnableTaskVector(n_tasks=n_tasks, depth=depth, dim=dim, heads=heads, steps=steps, lr=lr, batch=batch)
