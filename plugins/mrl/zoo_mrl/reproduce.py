"""``zoo reproduce mrl``: Matryoshka truncations vs independently trained fixed-feature models.

On digits_classify, MRL and MRL-E (``mrl_digits_cnn``, D=64, M={2, 4, ..., 64}) are trained once
per seed, and for every m a fixed-feature (FF) model of embedding size m (the same DigitsCNN
backbone, one classifier) is trained on its own with the same steps, batches and seed. The claim
holds when MRL's mean accuracy at every m is at least FF's minus ``TOLERANCE``.
"""
from __future__ import annotations

import logging
import time

from .plugin import CLAIM

log = logging.getLogger(__name__)

NESTING = (2, 4, 8, 16, 32, 64)
TOLERANCE = 0.01  # one point of test accuracy (4.5 of the 450 test images)
# The task's standard budget (zoo_task_digits.task.DEFAULT_STEPS, also the recipe's); 8 models x 2 seeds
# fit in 3 minutes on the 2-vCPU reference VM, a third seed does not.
STEPS, SEEDS = 600, (0, 1)
QUICK_STEPS, QUICK_SEEDS = 12, (0,)  # not 10: zoo_task_digits.task.train fails at exactly 10 steps (OneCycleLR)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def reproduce(quick: bool = False) -> "zoo.ClaimResult":  # noqa: F821 - zoo imported lazily
    """Train MRL, MRL-E and one FF model per m on digits_classify; return the accuracy table.

    Rows: ``MRL``, ``MRL-E``, ``FF`` (test accuracy at each m, mean over seeds) and the
    differences ``MRL - FF`` and ``MRL-E - FF``. ``quick=True`` trains 12 steps on one seed (a
    smoke test of the pipeline, not a measurement).
    """
    import zoo

    from .model import fixed_feature_digits_cnn
    from .train import fit_digits

    steps, seeds = (QUICK_STEPS, QUICK_SEEDS) if quick else (STEPS, SEEDS)
    nesting = list(NESTING)
    builders = {
        "MRL": lambda: zoo.create("mrl_digits_cnn", nesting=nesting),
        "MRL-E": lambda: zoo.create("mrl_e_digits_cnn", nesting=nesting),
    }
    t0 = time.perf_counter()
    per_seed: dict[int, dict[str, dict[int, float]]] = {}
    for seed in seeds:
        acc: dict[str, dict[int, float]] = {}
        for method, build in builders.items():
            _, metrics = fit_digits(build, seed=seed, steps=steps)
            acc[method] = {m: metrics[f"accuracy@{m}"] for m in NESTING}
        acc["FF"] = {}
        for m in NESTING:
            _, metrics = fit_digits(lambda m=m: fixed_feature_digits_cnn(dim=m), seed=seed, steps=steps)
            acc["FF"][m] = metrics[f"accuracy@{m}"]
        per_seed[seed] = acc
        log.info("seed %d done after %.1f s", seed, time.perf_counter() - t0)

    methods = ("MRL", "MRL-E", "FF")
    mean = {k: {m: _mean([per_seed[s][k][m] for s in seeds]) for m in NESTING} for k in methods}
    col = "acc@{}".format
    table = {k: {col(m): mean[k][m] for m in NESTING} for k in methods}
    for k in ("MRL", "MRL-E"):
        table[f"{k} - FF"] = {col(m): mean[k][m] - mean["FF"][m] for m in NESTING}

    def verdict(k: str) -> tuple[bool, int, float]:
        worst = min(NESTING, key=lambda m: mean[k][m] - mean["FF"][m])
        return mean[k][worst] >= mean["FF"][worst] - TOLERANCE, worst, 100 * (mean[k][worst] - mean["FF"][worst])

    passed, worst, gap = verdict("MRL")
    e_ok, e_worst, e_gap = verdict("MRL-E")
    best = max(NESTING, key=lambda m: mean["MRL"][m] - mean["FF"][m])
    seconds = time.perf_counter() - t0
    summary = (
        f"test accuracy on digits_classify (450 images), mean over seeds {list(seeds)}, {steps} AdamW steps per model. "
        f"MRL vs FF: smallest margin {gap:+.2f} points at m={worst}, largest {100 * (mean['MRL'][best] - mean['FF'][best]):+.2f} "
        f"at m={best}; the claim passes when MRL >= FF - {100 * TOLERANCE:g} point at every m. "
        f"MRL-E vs FF (reported, not part of the verdict): smallest margin {e_gap:+.2f} points at m={e_worst} "
        f"({'within' if e_ok else 'outside'} the tolerance)."
        + (" quick=True: a smoke run, not a measurement." if quick else "")
    )
    return zoo.ClaimResult(
        plugin="mrl", claim=CLAIM, passed=passed, table=table, summary=summary, seconds=seconds,
        settings={"task": "digits_classify", "embedding_dim": 64, "nesting": nesting, "steps": steps,
                  "seeds": list(seeds), "tolerance": TOLERANCE, "quick": quick, "torch_threads": 1,
                  "per_seed": {str(s): {k: {str(m): v for m, v in acc.items()} for k, acc in per_seed[s].items()}
                               for s in seeds}},
    )
