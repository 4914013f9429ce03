"""``zoo reproduce stf-merge``: STF against task_merge's merging baselines on the 8-task digits suite.

Each row merges the suite of one seed (the seed fixes the base's initialisation and every fine-tuning batch; the suite
is built once and cached) and scores the merged network on the eight test splits (``task.score_merger``): ``stf`` with
its CPU defaults (every feature kept, biases averaged), ``task_arithmetic`` and ``ties`` with their lambda chosen on
the validation split, ``weight_averaging``, and the reference rows ``base`` (no merge) and ``individual`` (each task's
own fine-tuned network). All mergers see the same base and task vectors; none of them trains.
"""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_task_merge import baselines as B
from zoo_task_task_merge import suite as S
from zoo_task_task_merge import task as T

from .model import CPU, stf
from .plugin import CLAIM, TASK

QUICK_TASKS = ("parity", "mod3", "loops")
KEEP = ("avg_acc", "normalized_acc", "merge_seconds")


class ScaledSTF(B.Merger):
    """STF's merged task vector scaled by one lambda chosen on validation (task arithmetic's grid): a reported
    variant, added after the first recorded run showed STF at full strength below the base."""

    def merge(self, suite: Any, *, tasks: Any = None, few_shot: Any = None) -> dict[str, torch.Tensor]:
        full = stf().merge(suite, tasks=tasks)
        tau = {k: full[k] - v for k, v in suite.base_state.items()}
        lam, state = B.select_lambda(suite, lambda lam: {k: v + lam * tau[k] for k, v in suite.base_state.items()},
                                     B.LAMBDA_GRID, tasks)
        self.chosen = {"lambda": lam}
        return state


def merge_row(*, seed: int, quick: bool, model: str) -> dict[str, float]:
    """``model``'s merge of the suite of ``seed`` (quick: three tasks), scored on the test splits."""
    tasks = list(QUICK_TASKS if quick else S.TASKS)
    torch.manual_seed(seed)
    suite = S.build_suite(seed=seed, tasks=tasks)
    merger = stf() if model == "stf" else ScaledSTF() if model == "stf_scaled" else B.build(model)
    metrics = T.score_merger(merger, suite, tasks=tasks, seed=seed, who=model)
    out = {k: metrics[k] for k in KEEP}
    out.update({k: v for k, v in metrics.items() if k.startswith("acc/")})
    if isinstance(getattr(merger, "chosen", None), dict) and "lambda" in merger.chosen:
        out["lambda"] = float(merger.chosen["lambda"])
    return out


MODELS = ("stf", "stf_scaled", "task_arithmetic", "ties", "weight_averaging", "base", "individual")
ROWS = [Row(m, merge_row, {"model": m}) for m in MODELS]
CHECKS = [Check("stf", "avg_acc", baseline="task_arithmetic", margin=0.0),
          Check("stf", "avg_acc", baseline="ties", margin=0.0)]
SETTINGS: dict[str, Any] = {"stf": dict(CPU), "suite_tasks": list(S.TASKS), "quick_tasks": list(QUICK_TASKS),
                            "lambda_grid": list(B.LAMBDA_GRID), "ties_grid": list(B.TIES_GRID), "ties_k": B.TIES_K}

REPRODUCTION = Claim(
    plugin="stf-merge", claim=CLAIM, task=TASK, seeds=(0, 1, 2, 3, 4), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings=SETTINGS,
    notes="margins fixed before the first recorded run: the paper claims STF keeps multi-task capability better than "
          "existing merging methods, with no size for the gap at this scale, so STF's mean test accuracy over the 8 "
          "tasks must exceed task arithmetic's and TIES's (lambda of each chosen on the validation split, grids "
          "including 0 = the base) by > 0, paired over 5 suite seeds. STF's own settings (all features, biases "
          "averaged) were fixed from the module's reading of the paper before any STF run on the 8-task suite. "
          "weight_averaging, base and individual are reported only; stf_scaled (STF's merged task vector times one "
          "lambda chosen on validation) was added after the first recorded run (STF at full strength: 0.713 mean "
          "accuracy, below the base's 0.799) and is reported only, not checked.",
)
