"""``zoo reproduce invariance-product``: the product space against single invariances in ``task_merge`` stitching.

Each row scores one projection on one stitching setting of the ``task_merge`` task (``task.evaluate(...,
mode="stitching", setting=S, baselines=[])``): encoders A and B trained on the digits (cached), 64 fixed anchors,
a head of 8,192 parameters trained on A's projected latents and applied zero-shot to B's (and the reverse). Rows per
setting: ``product`` (this plugin: cosine x Euclidean x L1 x L-inf), the task's baselines ``cosine`` (Moschella et
al.'s relative representation) and ``absolute`` (raw latents), and the plugin's single-similarity projections
``euclidean``, ``l1``, ``linf`` (the product's own subspaces alone, same normalisation). The projections have no
parameters; every head has the same size and training (steps, batches, seed): matched by the task.
"""
from __future__ import annotations

from typing import Any

from zoo.claims import Check, Claim, Row
from zoo_task_task_merge import stitching, task

from .model import invariance_product
from .plugin import CLAIM, TASK

SETTINGS = stitching.SETTINGS
PROJECTIONS = ("product", "cosine", "absolute", "euclidean", "l1", "linf")
KEEP = ("stitch_acc", "within_acc", "latent_similarity", "latent_top1", "latent_cka", "stitch_acc_ab", "stitch_acc_ba")
QUICK_STEPS = 40


def build(projection: str) -> Any:
    if projection == "product":
        return invariance_product()
    if projection in stitching.BASELINES:
        return stitching.build_baseline(projection)
    return invariance_product(similarities=(projection,))


def stitch_row(*, seed: int, quick: bool, projection: str, setting: str) -> dict[str, float]:
    """One projection on one stitching setting for ``seed``: the stitching mode's metrics."""
    res = task.evaluate(build(projection), mode="stitching", setting=setting, seed=seed, baselines=[],
                        steps=QUICK_STEPS if quick else None)
    return {k: res.metrics[k] for k in KEEP if k in res.metrics}


ROWS = [Row(f"{p}:{s}", stitch_row, {"projection": p, "setting": s}) for s in SETTINGS for p in PROJECTIONS]

WRONG_FOR_COSINE = ("translate", "isometry")  # B's latents shifted: cosine relative projections are not invariant
RIGHT_FOR_COSINE = ("seed", "arch", "scale_rotate")
CHECKS = [Check(f"product:{s}", "stitch_acc", baseline=f"cosine:{s}", margin=0.30) for s in WRONG_FOR_COSINE]
CHECKS += [Check(f"product:{s}", "latent_similarity", baseline=f"cosine:{s}", margin=0.0) for s in WRONG_FOR_COSINE]
CHECKS += [Check(f"product:{s}", "stitch_acc", baseline=f"cosine:{s}", margin=0.0) for s in RIGHT_FOR_COSINE]
CHECKS += [Check(f"product:{s}", "stitch_acc", baseline=f"euclidean:{s}", margin=-0.03) for s in SETTINGS]

REPRODUCTION = Claim(
    plugin="invariance-product", claim=CLAIM, task=TASK, seeds=(0, 1, 2, 3, 4), quick_seeds=(0,), rows=ROWS,
    checks=CHECKS, settings={"projections": list(PROJECTIONS), "product": "cosine, euclidean, l1, linf; standardize; "
                                                                          "concat"},
    task_options={"mode": "stitching"},
    notes="margins fixed before the first recorded run, after one pilot seed (seed 0, every row): (1) where cosine is "
          "the wrong invariance (B's latents translated, or rotated and translated) the product must stitch at least "
          "0.30 better than cosine relative representations (pilot gap about 0.69) and its A/B latent similarity must "
          "not be lower (pilot +0.03); (2) where cosine is right or nearly so (another seed, another architecture, a "
          "rotation and rescaling of B) the product must not stitch worse than cosine (margin 0); (3) in every setting "
          "it must stay within 0.03 of the Euclidean-only projection, a priori the strongest single invariance here "
          "(isometries, and rescaling after the per-sample standardisation). L1 and L-inf rows are reported: in the "
          "pilot L-inf alone stitched the MLP/CNN pair best (0.91 vs the product's 0.86), so the product is not the "
          "best single invariance in every setting; latent similarity elsewhere is reported only (pilot: the product "
          "0.02 below cosine on seed and scale_rotate, 0.04 above on arch).",
)
