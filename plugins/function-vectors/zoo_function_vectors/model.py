"""Function vectors (Todd, Li, Sen Sharma, Mueller, Wallace and Bau, ICLR 2024, arXiv:2310.15213).

The method, on a GPT with per-head hook points (``zoo_task_icl_toy.gpt.HookedGPT``):

1. Task-conditioned mean head outputs (§2.1): for every task t and head (l, h), the mean of the head's output at the
   last (query) position over clean in-context prompts, ``abar[t, l, h]``.
2. Causal mediation (§2.2, Eqs. 1-3): on corrupted prompts (the same demonstrations with shuffled outputs, so the
   mapping is gone) replace one head's last-position output by ``abar[t, l, h]`` and measure the rise in the
   probability of the right answer: the causal indirect effect ``CIE(l, h | prompt)``; averaged over the prompts of
   every task, the average indirect effect ``AIE(l, h)``.
3. The function vector (§2.3, Eq. 5): ``FV_t = sum over the k heads of largest AIE of abar[t, l, h]`` mapped into the
   residual stream (through the head's slice of the output projection), one head set for all tasks.
4. Steering (§3): ``FV_t`` is added to the residual stream at one layer (the paper: about |L|/3) at the last
   position of a zero-shot prompt.

For regression prompts (``icl_toy`` ``mode="regression"``) the probability of the answer is replaced by minus the
squared error of the prediction (an extension: the paper scores tokens only).

Paper defaults (``PAPER``): k = 10 heads of GPT-J's 448 (about 2%), layer 9 of 28 (|L|/3), 10-shot prompts, 25
corrupted prompts per task for the scan. CPU defaults (``CPU``) for ``icl_toy``'s 4-layer, 4-head GPT: k = 4 of 16
heads (a quarter: 2% of 16 heads would be none), layer depth // 3 = 1, 5-shot prompts, every fit prompt of the task
(64) in the scan. Deviations: the toy GPT instead of an LLM; the AIE uses the corrupted prompts of the task's fit set
(the paper draws them separately); the vector is added at the last position only (as in the paper's zero-shot runs).
"""
from __future__ import annotations

from typing import Any

import torch

from zoo_task_icl_toy.gpt import HookedGPT, mean_head_outputs, patch_heads
from zoo_task_icl_toy.interventions import HeadSumVector, ICLData, answer_score

PAPER: dict[str, Any] = {"k": 10, "layer": 9, "shots": 10, "n_scan": 25, "model": "GPT-J 6B (28 layers x 16 heads)"}
CPU: dict[str, Any] = {"k": 4, "layer": None, "shots": 5, "n_scan": None}


@torch.no_grad()
def average_indirect_effect(gpt: HookedGPT, data: ICLData, *, n_scan: int | None = None,
                            batch: int = 512) -> torch.Tensor:
    """AIE(l, h) (Todd et al. Eq. 3): the rise in the right answer's score on corrupted prompts when head (l, h)'s
    last-position output is set to its task-conditioned mean over clean prompts; averaged over prompts, then tasks.

    ``n_scan`` corrupted prompts per task (default: all of ``data.corrupt``). Returns (depth, heads).
    """
    zbar = torch.stack([mean_head_outputs(gpt, data.clean.of_task(t).inputs) for t in range(data.n_tasks)])
    parts = [data.corrupt.of_task(t) for t in range(data.n_tasks)]
    if n_scan is not None:
        parts = [p.__class__(p.inputs[:n_scan], p.targets[:n_scan], p.task[:n_scan]) for p in parts]
    cie = torch.zeros(data.n_tasks, gpt.depth, gpt.heads)
    for t, p in enumerate(parts):
        for s in range(0, len(p), batch):
            x, y = p.inputs[s:s + batch], p.targets[s:s + batch]
            base = answer_score(gpt(x)[:, -1], y, data.kind)
            for layer in range(gpt.depth):
                for head in range(gpt.heads):
                    with patch_heads(gpt, {(layer, head): zbar[t, layer, head]}):
                        patched = answer_score(gpt(x)[:, -1], y, data.kind)
                    cie[t, layer, head] += (patched - base).sum()
        cie[t] /= len(p)
    return cie.mean(0)


class FunctionVector(HeadSumVector):
    """Function vectors on an ``icl_toy`` GPT: ``fit`` runs the AIE scan and sums the top-k heads' task means.

    After ``fit``: ``aie`` (depth, heads), ``chosen`` (the top-k mask), ``vectors[t, layer]`` = ``FV_t``;
    ``function_vector(t)`` returns ``FV_t`` and ``at_layer(l)`` moves every FV to another layer (for a layer sweep).

    >>> fv = FunctionVector(n_tasks=8, depth=4, dim=64, heads=4, k=4)   # the CPU default on icl_toy's token GPT
    >>> fv.layer, fv.k
    (1, 4)
    """

    def __init__(self, n_tasks: int = 8, depth: int = 4, dim: int = 64, heads: int = 4, k: int = CPU["k"],
                 layer: int | None = CPU["layer"], n_scan: int | None = CPU["n_scan"]):
        super().__init__(n_tasks, depth, dim, heads=heads, k=k, layer=layer)
        if n_scan is not None and n_scan < 1:
            raise ValueError(f"n_scan must be >= 1 corrupted prompts per task (or None: all), got {n_scan}")
        self.n_scan = n_scan
        self.register_buffer("aie", torch.zeros(depth, heads))

    def select(self, gpt: HookedGPT, data: ICLData, means: torch.Tensor, seed: int) -> torch.Tensor:
        self.aie.copy_(average_indirect_effect(gpt, data, n_scan=self.n_scan))
        mask = torch.zeros(self.depth * self.heads, dtype=torch.bool)
        mask[self.aie.flatten().topk(self.k).indices] = True
        return mask.view(self.depth, self.heads)

    def fit(self, gpt: HookedGPT, data: ICLData, *, seed: int = 0, **options: Any) -> dict[str, float]:
        out = super().fit(gpt, data, seed=seed, **options)
        top = self.aie.flatten().topk(self.k).values
        return {**out, "aie_top_k": float(top.mean()), "aie_max": float(top[0]),
                "aie_share_top_k": float(top.clamp(min=0).sum() / self.aie.clamp(min=0).sum().clamp(min=1e-12))}

    def function_vector(self, task: int) -> torch.Tensor:
        """``FV_task`` (dim,)."""
        return self.vectors[task, self.layer].clone()

    def at_layer(self, layer: int) -> None:
        """Move every function vector to the residual stream entering block ``layer``."""
        if not 0 <= layer <= self.depth:
            raise ValueError(f"layer must be in 0..{self.depth}, got {layer}")
        fv = self.vectors[:, self.layer].clone()
        self.vectors.zero_()
        self.vectors[:, layer] = fv
        self.layer = int(layer)


def function_vector(*, n_tasks: int = 8, depth: int = 4, dim: int = 64, heads: int = 4, k: int | None = None,
                    layer: int | None = None, n_scan: int | None = None, preset: str = "cpu") -> FunctionVector:
    """Function vectors for ``icl_toy``'s token GPT (its sizes are the defaults); ``preset="paper"`` takes the
    paper's k = 10 heads and layer 9 (for a GPT as deep as GPT-J's 28 layers: pass its sizes)."""
    if preset not in ("cpu", "paper"):
        raise ValueError(f"unknown preset {preset!r}; choose 'cpu' or 'paper'")
    base = PAPER if preset == "paper" else CPU
    return FunctionVector(n_tasks=n_tasks, depth=depth, dim=dim, heads=heads, k=base["k"] if k is None else k,
                          layer=base["layer"] if layer is None else layer,
                          n_scan=base["n_scan"] if n_scan is None else n_scan)
