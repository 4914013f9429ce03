"""``zoo reproduce pointer-net``: the Pointer Network against the task's ``seq2seq`` at matched parameters.

Each row trains one seeded model with ``algorithmic_seq``'s own loop (``task.evaluate(..., baselines=[])``: Adam,
batches of 64 problems of one size drawn from 5-10 points, gradient clipping at 1) and scores it on 256 fresh
problems at 5, 10, 15 and 20 points (TSP: 5-8 against the brute-force optimum). The ``seq2seq`` rows are
``task.build_baseline("seq2seq", params=count_params(pointer_net))`` (within 1% of its parameters), trained for the
same steps at the same learning rate on the same problem stream.
"""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_algorithmic_seq import task

from .model import CPU, pointer_net
from .plugin import CLAIM, TASK

LR = 3e-3  # both models; at the task's 1e-3 the Pointer Net sat on its loss plateau for the whole budget (pilot)
STEPS = {"hull": 2000, "sort": 600, "tsp": 300}  # TSP batches cost a brute-force optimum each: its rows are reported
QUICK_STEPS = 30
TSP_BEAM = 4  # the paper decoded TSP by beam search over valid tours; seq2seq (the task's) decodes greedily


def build(model: str, mode: str, seed: int) -> torch.nn.Module:
    """The seeded, untrained Pointer Net for ``mode`` or the task's seq2seq sized to it."""
    torch.manual_seed(seed)
    ptr = pointer_net(in_dim=task.D.DIMS[mode], beam=TSP_BEAM if mode == "tsp" else 1, visit_all=mode == "tsp")
    if model == "pointer_net":
        return ptr
    return task.build_baseline("seq2seq", params=count_params(ptr), seed=seed, mode=mode)


def pointer_row(*, seed: int, quick: bool, model: str, mode: str) -> dict[str, float]:
    """One model trained and scored on ``mode`` at every test size (the task's metrics, ``params``)."""
    net = build(model, mode, seed)
    torch.manual_seed(seed)
    res = task.evaluate(net, mode=mode, steps=QUICK_STEPS if quick else STEPS[mode], lr=LR, seed=seed, baselines=[],
                        n_test=32 if quick else task.N_TEST)
    keep = ("params", "final_train_loss")
    return {k: v for k, v in res.metrics.items() if "@" in k or k in keep}


ROWS = [Row(f"{model}:{mode}", pointer_row, {"model": model, "mode": mode})
        for mode in ("hull", "sort", "tsp") for model in ("pointer_net", "seq2seq")]

CHECKS = [
    Check("pointer_net:hull", "acc@10", baseline="seq2seq:hull", margin=0.0),
    Check("pointer_net:hull", "area@20", margin=0.5),
]

SETTINGS: dict[str, Any] = {"lr": LR, "steps": STEPS, "quick_steps": QUICK_STEPS, "hidden": CPU["hidden"],
                            "init_scale": CPU["init_scale"],
                            "decode": f"greedy (TSP: pointer_net beam {TSP_BEAM} over valid tours; seq2seq greedy)"}

REPRODUCTION = Claim(
    plugin="pointer-net", claim=CLAIM, task=TASK, seeds=(0, 1, 2), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings=SETTINGS, task_options={"mode": "hull"},
    notes="margins fixed before the first recorded run, after one pilot seed: (1) in the training range the paper's "
          "Table 1 has Ptr-Net above seq2seq with attention on hull, so acc@10 (exact hulls at the largest training "
          "size) must beat seq2seq's by >= 0 (the paper states no size of the gap); (2) beyond it, hull area coverage "
          "at 20 points must be >= 0.5 (half the true hull's area, far above what a model that cannot name the "
          "positions gets: seq2seq's area@20 is reported, not checked, its failure there being by construction). "
          "Sort and TSP rows are reported only (the paper compares TSP with heuristics, not with seq2seq). TSP: the "
          "paper beam-searched valid tours, as the pointer_net rows do (beam 4), so their length_ratio is defined; "
          "greedy seq2seq repeats cities (valid@n). Both models train at lr 3e-3: in the pilot the Pointer Net at the "
          "task's 1e-3 did not leave its initial loss plateau in 2,000 steps (the paper trained on 1M examples with "
          "SGD). The first recorded run (TSP 1,000 greedy steps, sort 1,000) took 523 s of CPU and gave TSP no valid "
          "tour; this one has the same checks and hull protocol, cheaper sort/TSP rows and beam-searched TSP.",
)
