"""aTLAS: task vectors composed with learned anisotropic scaling (Zhang, Albert, Rodriguez-Opazo, van den Hengel and
Abbasnejad 2024, "Knowledge composition using task vectors with learned anisotropic scaling", arXiv:2407.02880).

Task arithmetic adds task vectors ``tau_t = theta_t - theta_0`` with one global coefficient. aTLAS (Sec. 3) splits
every task vector into its parameter blocks ``tau_t^(b)`` (here: one block per tensor of the state dict, as in the
paper's per-layer weight/bias blocks) and learns one coefficient per task and block,

    theta(Lambda) = theta_0 + sum_t sum_b lambda_{t,b} tau_t^(b),        Lambda in R^{T x B},

by gradient descent on a task objective through ``torch.func.functional_call``, the network weights themselves frozen:
only ``T * B`` numbers are learned (8 x 5 = 40 on the task_merge suite), so a handful of labelled examples suffice. Objectives:
``"ce"``: cross-entropy on few-shot labelled data of every task (the paper's supervised task-arithmetic / few-shot
setting); ``"entropy"``: the mean prediction entropy on unlabelled data of every task (label-free, the paper's
unsupervised variant; the paper's strongest unsupervised objective, a FixMatch-style pseudo-labelling with strong
augmentations, is not reproduced: the suite has no augmentation pipeline).

``AtlasModel(arch, base_state, task_vectors)(*inputs)`` is the composed network (the catalog's forward);
``merged_state_dict()`` returns ``theta(Lambda)`` for any module of the same architecture. ``AtlasMerge`` is the
``task_merge`` merger: ``merge(suite, few_shot=...)`` trains Lambda and returns the merged state dict.

Special case (tested): every coefficient equal to ``lam`` is task arithmetic at ``lam`` exactly; zero is the base.

Source: the paper's abstract and Sec. 3 as summarised in the catalog; the paper's text was not read here, so the
optimiser settings are CPU choices (``CPU``): Adam, lr 0.05, 300 full-batch steps, coefficients initialised at 0 (the
pretrained model). Deviations: MLP blocks instead of CLIP ViT blocks; no pseudo-labelling objective (above); no
block-selection/mixing of the most informative blocks (the paper's memory-saving variant).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn
from torch.func import functional_call

__all__ = ["CPU", "PAPER", "OBJECTIVES", "AtlasModel", "AtlasMerge", "atlas"]

CPU: dict[str, Any] = {"objective": "ce", "steps": 300, "lr": 0.05, "init": 0.0, "unlabeled": 256}
PAPER: dict[str, Any] = dict(CPU)  # the paper's optimiser settings were not read (see the module docstring)
PRESETS = {"cpu": CPU, "paper": PAPER}
OBJECTIVES = ("ce", "entropy")

State = dict[str, torch.Tensor]


class AtlasModel(nn.Module):
    """``theta_0 + sum_t sum_b lambda_{t,b} tau_t^(b)`` evaluated with ``functional_call`` on ``arch``.

    Args:
        arch: a module of the architecture (its own weights are never used).
        base_state: ``theta_0``, name -> tensor (every entry of ``arch.state_dict()``).
        task_vectors: T dicts name -> tensor (the blocks are their entries, in ``base_state``'s order).
        init: the initial value of every coefficient.

    >>> arch = nn.Linear(3, 2)
    >>> base = {k: torch.zeros_like(v) for k, v in arch.state_dict().items()}
    >>> tv = [{k: torch.ones_like(v) for k, v in base.items()}]
    >>> m = AtlasModel(arch, base, tv, init=0.5)
    >>> m.coefficients.shape, m(torch.ones(1, 3)).tolist()   # 0.5 * (1 + 1 + 1) + 0.5
    (torch.Size([1, 2]), [[2.0, 2.0]])
    """

    def __init__(self, arch: nn.Module, base_state: Mapping[str, torch.Tensor],
                 task_vectors: Sequence[Mapping[str, torch.Tensor]], init: float = CPU["init"]) -> None:
        super().__init__()
        if not task_vectors:
            raise ValueError("AtlasModel needs at least one task vector")
        self.names = list(base_state)
        expected = set(arch.state_dict())
        if set(self.names) != expected:
            raise ValueError(f"AtlasModel: base_state keys {sorted(self.names)} do not match the architecture's "
                             f"{sorted(expected)}")
        for i, tv in enumerate(task_vectors):
            if set(tv) != set(self.names):
                raise ValueError(f"AtlasModel: task vector {i} has keys {sorted(tv)}, expected {sorted(self.names)}")
        self.arch = [arch]  # a list: not a submodule, so its weights are neither parameters nor state of this module
        self.base = {k: base_state[k].detach() for k in self.names}
        self.vectors = [{k: tv[k].detach() for k in self.names} for tv in task_vectors]
        self.coefficients = nn.Parameter(torch.full((len(task_vectors), len(self.names)), float(init)))

    def merged_params(self) -> dict[str, torch.Tensor]:
        """``theta(Lambda)`` as tensors that carry the gradient to ``coefficients``."""
        lam = self.coefficients
        return {k: self.base[k] + sum(lam[t, b] * tv[k] for t, tv in enumerate(self.vectors))
                for b, k in enumerate(self.names)}

    def merged_state_dict(self) -> State:
        """``theta(Lambda)``, detached: loads into any module of the architecture."""
        with torch.no_grad():
            return {k: v.detach().clone() for k, v in self.merged_params().items()}

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return functional_call(self.arch[0], self.merged_params(), inputs, kwargs)


def _entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1).mean()


class AtlasMerge(nn.Module):
    """aTLAS as a ``task_merge`` merger: ``merge(suite, *, tasks, few_shot, seed, steps)`` learns Lambda (T x B) on
    ``few_shot`` (``{task: (x, y)}``, objective "ce") or on unlabelled training inputs (objective "entropy") and
    returns ``theta(Lambda)``; ``last`` keeps the trained ``AtlasModel``."""

    def __init__(self, objective: str = CPU["objective"], steps: int = CPU["steps"], lr: float = CPU["lr"],
                 init: float = CPU["init"], unlabeled: int = CPU["unlabeled"]) -> None:
        super().__init__()
        if objective not in OBJECTIVES:
            raise ValueError(f"atlas: unknown objective {objective!r}; choose from {list(OBJECTIVES)}")
        if int(steps) < 0 or float(lr) <= 0 or int(unlabeled) < 1:
            raise ValueError(f"atlas: need steps >= 0, lr > 0, unlabeled >= 1; got {steps}, {lr}, {unlabeled}")
        self.objective, self.steps, self.lr = objective, int(steps), float(lr)
        self.init, self.unlabeled = float(init), int(unlabeled)
        self.last: AtlasModel | None = None

    def merge(self, suite: Any, *, tasks: Sequence[str] | None = None, few_shot: Any = None, seed: int = 0,
              steps: int | None = None) -> State:
        names = list(suite.tasks) if tasks is None else list(tasks)
        idx = [suite.tasks.index(t) for t in names]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            model = AtlasModel(suite.architecture(), suite.base_state, [suite.task_vectors[i] for i in idx],
                               init=self.init)
        if self.objective == "ce":
            if not few_shot:
                raise ValueError("atlas: objective 'ce' learns from labelled few-shot data; evaluate with shots=K "
                                 "(e.g. --task-arg shots=10) or build atlas(objective='entropy')")
            missing = [t for t in names if t not in few_shot]
            if missing:
                raise ValueError(f"atlas: few_shot has no data for tasks {missing}")
            batches = [(t, few_shot[t][0], few_shot[t][1]) for t in names]
        else:
            batches = [(t, suite.unlabeled(t, min(self.unlabeled, len(suite.train(t)[1])), seed), None)
                       for t in names]
        opt = torch.optim.Adam(model.parameters(), lr=self.lr)
        n_steps = self.steps if steps is None else int(steps)
        self.losses: list[float] = []
        for _ in range(n_steps):
            params = model.merged_params()
            loss = torch.zeros(())
            for t, x, y in batches:  # every task's loss, averaged (Sec. 3: one objective over the composed model)
                logits = functional_call(model.arch[0], params, (x, t))
                loss = loss + (nn.functional.cross_entropy(logits, y) if y is not None else _entropy(logits))
            loss = loss / len(batches)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            self.losses.append(float(loss.detach()))
        self.last = model
        return model.merged_state_dict()

    def learnable_coefficients(self, suite: Any) -> int:
        """T x B: what aTLAS learns on ``suite``."""
        return len(suite.tasks) * len(suite.base_state)

    def stored_floats(self, suite: Any) -> int:
        """One merged network (Lambda is folded into it)."""
        return sum(v.numel() for v in suite.base_state.values())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise TypeError("AtlasMerge is a merging method: call .merge(suite, few_shot=...), then load the state into "
                        "suite.architecture(); AtlasModel is the composed network")


def atlas(preset: str = "cpu", objective: str | None = None, steps: int | None = None, lr: float | None = None,
          init: float | None = None, unlabeled: int | None = None) -> AtlasMerge:
    """The zoo builder: ``preset`` ("cpu" or "paper"), then any argument given (None keeps the preset's value)."""
    if preset not in PRESETS:
        raise ValueError(f"atlas: unknown preset {preset!r}; choose from {list(PRESETS)}")
    given = {"objective": objective, "steps": steps, "lr": lr, "init": init, "unlabeled": unlabeled}
    return AtlasMerge(**{**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}})
