"""``zoo reproduce atlas``: aTLAS (10 labelled examples per class and task) against task arithmetic's one global lambda.

Each row merges the 8-task digits suite of one seed (built once and cached) and scores the merged network on the
eight test splits (``task.score_merger``). ``atlas`` learns its T x B = 8 x 5 coefficients on ``suite.few_shot(t, 10,
seed)`` for every task (cross-entropy, Adam, the model's CPU defaults); ``atlas_entropy`` learns them without labels
(prediction entropy on 256 unlabelled training inputs per task); ``task_arithmetic`` chooses its single lambda from
{0, 0.05, ..., 1} on the full validation split (Ilharco et al.'s protocol: more labels than aTLAS sees);
``task_arithmetic_10shot`` chooses it on the same 10-shot data aTLAS trains on; ``base`` and ``individual`` are the
reference rows.
"""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_task_merge import baselines as B
from zoo_task_task_merge import suite as S
from zoo_task_task_merge import task as T

from .model import CPU, atlas
from .plugin import CLAIM, TASK

SHOTS = 10
QUICK_TASKS = ("parity", "mod3", "loops")
QUICK_STEPS = 20
KEEP = ("avg_acc", "normalized_acc", "merge_seconds")


class FewShotTaskArithmetic(B.Merger):
    """Task arithmetic whose one lambda is chosen on the few-shot data (mean accuracy over tasks)."""

    def merge(self, suite: Any, *, tasks: Any = None, few_shot: Any = None) -> dict[str, torch.Tensor]:
        names = list(suite.tasks) if tasks is None else list(tasks)
        best = None
        for lam in B.LAMBDA_GRID:
            state = B.task_arithmetic(suite, lam, names)
            net = suite.load(state)
            with torch.no_grad():
                acc = sum(float((net(few_shot[t][0], t).argmax(1) == few_shot[t][1]).float().mean())
                          for t in names) / len(names)
            if best is None or acc > best[0]:
                best = (acc, lam, state)
        self.chosen = {"lambda": best[1]}
        return best[2]


def merge_row(*, seed: int, quick: bool, model: str) -> dict[str, float]:
    """``model``'s merge of the suite of ``seed`` (quick: three tasks, few aTLAS steps), scored on the test splits."""
    tasks = list(QUICK_TASKS if quick else S.TASKS)
    torch.manual_seed(seed)
    suite = S.build_suite(seed=seed, tasks=tasks)
    few_shot = {t: suite.few_shot(t, SHOTS, seed) for t in tasks}
    steps = QUICK_STEPS if quick else None
    if model == "atlas":
        merger = atlas()
    elif model == "atlas_entropy":
        merger = atlas(objective="entropy")
    elif model == "task_arithmetic_10shot":
        merger = FewShotTaskArithmetic()
    else:
        merger = B.build(model)
    metrics = T.score_merger(merger, suite, tasks=tasks, few_shot=few_shot, seed=seed, steps=steps, who=model)
    out = {k: metrics[k] for k in KEEP}
    out.update({k: v for k, v in metrics.items() if k.startswith("acc/")})
    if model.startswith("atlas"):
        out["coefficients"] = float(merger.learnable_coefficients(suite))
    if isinstance(getattr(merger, "chosen", None), dict) and "lambda" in merger.chosen:
        out["lambda"] = float(merger.chosen["lambda"])
    return out


MODELS = ("atlas", "atlas_entropy", "task_arithmetic", "task_arithmetic_10shot", "base", "individual")
ROWS = [Row(m, merge_row, {"model": m}) for m in MODELS]
CHECKS = [Check("atlas", "avg_acc", baseline="task_arithmetic", margin=0.0)]
SETTINGS: dict[str, Any] = {"atlas": dict(CPU), "shots": SHOTS, "suite_tasks": list(S.TASKS),
                            "quick_tasks": list(QUICK_TASKS), "quick_steps": QUICK_STEPS,
                            "lambda_grid": list(B.LAMBDA_GRID)}

REPRODUCTION = Claim(
    plugin="atlas", claim=CLAIM, task=TASK, seeds=(0, 1, 2, 3, 4), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings=SETTINGS,
    notes="margin fixed before the first recorded run: the paper reports learned anisotropic scaling above task "
          "arithmetic's single coefficient with no size for the gap at this scale, so aTLAS (10 labelled examples per "
          "class and task) must beat task arithmetic with lambda chosen on the full validation split (grid including "
          "0 = the base) in mean test accuracy over the 8 tasks by > 0, paired over 5 suite seeds. The unsupervised "
          "aTLAS row and task arithmetic with lambda chosen on the same 10-shot data are reported, not checked.",
)
