"""Interventions on the ``icl_toy`` GPTs: what a model on this task is, and the task's baselines.

A model on ``icl_toy`` is an **intervention**, not a network: an ``nn.Module`` that learns something from the frozen
GPT and in-context prompts (``fit``) and then runs the GPT on zero-shot prompts with that something applied
(``forward``). ``TaskVectorModel`` is the common form: per-task vectors added to the residual stream at the last
position, one per residual slot (entering block ``l``, ``l = 0..depth``; most methods fill one slot):

    model.fit(gpt, data)                 # data: ICLData (clean, corrupted and zero-shot prompts of every task)
    logits = model(gpt, inputs, task)    # (B, T, vocab) or (B, T, 1) for regression; ``task`` (B,) task indices

Baselines (all add at the same layer, ``depth // 3`` as Todd et al. 2024 do, the sum of mean head outputs):

* ``none``: no vector (the zero-shot prompt as it is);
* ``random_heads``: the task-mean outputs (at the query position of clean prompts) of ``k`` heads drawn at random;
* ``mean_heads``: the same for the ``k`` heads whose task-mean output moves most between zero-shot and in-context
  prompts (the norm of the shift, averaged over tasks): an FV-style mean of top heads chosen without a causal scan
  (the causal scan, the average indirect effect, is the ``function-vectors`` plugin).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .gpt import HookedGPT, add_to_residual, head_vectors, mean_head_outputs


@dataclass
class Prompts:
    """A batch of prompts: ``inputs`` (B, T) ids or (B, T, d + 1) vectors, ``targets`` (B,) the query answers,
    ``task`` (B,) task indices."""

    inputs: torch.Tensor
    targets: torch.Tensor
    task: torch.Tensor

    def __len__(self) -> int:
        return len(self.inputs)

    def of_task(self, t: int) -> Prompts:
        keep = self.task == t
        return Prompts(self.inputs[keep], self.targets[keep], self.task[keep])


@dataclass
class ICLData:
    """What ``fit`` gets: ``clean`` k-shot prompts, ``corrupt`` (the same demonstrations with shuffled outputs),
    ``zero`` (the query alone) for every task; ``kind`` is "token" or "regression"."""

    kind: str
    tasks: tuple[str, ...]
    shots: int
    clean: Prompts
    corrupt: Prompts
    zero: Prompts

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)


def answer_score(out_last: torch.Tensor, targets: torch.Tensor, kind: str) -> torch.Tensor:
    """Per-prompt score of the query answer, higher is better: the probability of the right token, or minus the
    squared error of a regression prediction."""
    if kind == "token":
        return out_last.softmax(-1).gather(-1, targets[:, None])[:, 0]
    return -(out_last[:, 0] - targets) ** 2


def answer_loss(out_last: torch.Tensor, targets: torch.Tensor, kind: str) -> torch.Tensor:
    """The training loss of an answer: cross-entropy, or squared error."""
    if kind == "token":
        return nn.functional.cross_entropy(out_last, targets)
    return ((out_last[:, 0] - targets) ** 2).mean()


class TaskVectorModel(nn.Module):
    """Per-task vectors ``vectors[task, l]`` added to the residual stream entering block ``l`` at the last position.

    Subclasses fill ``vectors`` in ``fit`` (or override ``additions`` when the vectors are a function of learned
    parameters). ``n_tasks``, ``depth`` and ``dim`` must match the GPT and the data the model is used with.
    """

    input_kind = "intervention"

    def __init__(self, n_tasks: int = 8, depth: int = 4, dim: int = 64):
        super().__init__()
        for name, v in {"n_tasks": n_tasks, "depth": depth, "dim": dim}.items():
            if int(v) < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be >= 1, got {v}")
        self.n_tasks, self.depth, self.dim = int(n_tasks), int(depth), int(dim)
        self.register_buffer("vectors", torch.zeros(n_tasks, depth + 1, dim))

    def check(self, gpt: HookedGPT, data: ICLData | None = None) -> None:
        """Raise ``ValueError`` when the GPT or the data do not match this model's sizes."""
        if (gpt.depth, gpt.dim) != (self.depth, self.dim):
            raise ValueError(f"{type(self).__name__} was built for depth={self.depth}, dim={self.dim}; this GPT has "
                             f"depth={gpt.depth}, dim={gpt.dim} (build the model with the GPT's sizes)")
        if data is not None and data.n_tasks != self.n_tasks:
            raise ValueError(f"{type(self).__name__} holds {self.n_tasks} tasks, the data has {data.n_tasks} "
                             f"({', '.join(data.tasks)}): build it with n_tasks={data.n_tasks}")

    def additions(self, task: torch.Tensor) -> torch.Tensor:
        """What is added for each prompt: (B, depth + 1, dim)."""
        return self.vectors[task]

    def forward(self, gpt: HookedGPT, inputs: torch.Tensor, task: torch.Tensor) -> torch.Tensor:
        self.check(gpt)
        task = torch.as_tensor(task, dtype=torch.long, device=inputs.device)
        if task.ndim == 0:
            task = task.expand(len(inputs))
        if task.shape != (len(inputs),) or int(task.min()) < 0 or int(task.max()) >= self.n_tasks:
            raise ValueError(f"task must be (B,) = ({len(inputs)},) indices in 0..{self.n_tasks - 1}, "
                             f"got shape {tuple(task.shape)}")
        add = self.additions(task)
        with add_to_residual(gpt, {layer: add[:, layer] for layer in range(self.depth + 1)}):
            return gpt(inputs)

    def fit(self, gpt: HookedGPT, data: ICLData, **options: Any) -> dict[str, float]:  # noqa: ARG002
        """Learn the vectors from ``gpt`` and ``data``; returns figures worth reporting (none here)."""
        self.check(gpt, data)
        return {}


@torch.no_grad()
def task_head_means(gpt: HookedGPT, prompts: Prompts, n_tasks: int) -> torch.Tensor:
    """Every head's task-conditioned mean output at the last position, mapped into the residual stream:
    (n_tasks, depth, heads, dim)."""
    z = torch.stack([mean_head_outputs(gpt, prompts.of_task(t).inputs) for t in range(n_tasks)])
    return head_vectors(gpt, z)


class HeadSumVector(TaskVectorModel):
    """The vector of task t is the sum of head (l, h)'s task-mean outputs over the chosen heads, added at ``layer``
    (default ``depth // 3``). Subclasses choose the heads in ``select``."""

    def __init__(self, n_tasks: int = 8, depth: int = 4, dim: int = 64, heads: int = 4, k: int = 4,
                 layer: int | None = None):
        super().__init__(n_tasks, depth, dim)
        self.heads, self.k = int(heads), int(k)
        self.layer = depth // 3 if layer is None else int(layer)
        if not 1 <= self.k <= depth * heads:
            raise ValueError(f"k must be in 1..{depth * heads} (the GPT's heads), got {k}")
        if not 0 <= self.layer <= depth:
            raise ValueError(f"layer must be in 0..{depth}, got {layer}")
        self.register_buffer("chosen", torch.zeros(depth, heads, dtype=torch.bool))

    def select(self, gpt: HookedGPT, data: ICLData, means: torch.Tensor, seed: int) -> torch.Tensor:
        """A (depth, heads) boolean mask of the ``k`` heads to sum."""
        raise NotImplementedError

    def fit(self, gpt: HookedGPT, data: ICLData, *, seed: int = 0, **options: Any) -> dict[str, float]:
        self.check(gpt, data)
        means = task_head_means(gpt, data.clean, self.n_tasks)
        self.chosen.copy_(self.select(gpt, data, means, seed))
        self.vectors.zero_()
        self.vectors[:, self.layer] = (means * self.chosen[None, :, :, None]).sum((1, 2))
        return {"vector_norm": float(self.vectors[:, self.layer].norm(dim=-1).mean())}


class NoVector(TaskVectorModel):
    """Baseline ``none``: the zero-shot prompt with nothing added."""


class RandomHeads(HeadSumVector):
    """Baseline ``random_heads``: ``k`` heads drawn uniformly (seeded by ``fit``'s seed)."""

    def select(self, gpt: HookedGPT, data: ICLData, means: torch.Tensor, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(10_007 + seed)
        mask = torch.zeros(self.depth * self.heads, dtype=torch.bool)
        mask[torch.randperm(self.depth * self.heads, generator=g)[: self.k]] = True
        return mask.view(self.depth, self.heads)


class MeanHeads(HeadSumVector):
    """Baseline ``mean_heads``: the ``k`` heads whose task-mean output shifts most from zero-shot to in-context."""

    def select(self, gpt: HookedGPT, data: ICLData, means: torch.Tensor, seed: int) -> torch.Tensor:
        zero = task_head_means(gpt, data.zero, self.n_tasks)
        shift = (means - zero).norm(dim=-1).mean(0)  # (depth, heads)
        mask = torch.zeros(self.depth * self.heads, dtype=torch.bool)
        mask[shift.flatten().topk(self.k).indices] = True
        return mask.view(self.depth, self.heads)
