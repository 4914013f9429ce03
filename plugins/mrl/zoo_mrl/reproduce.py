"""``zoo reproduce mrl``: Matryoshka truncations vs independently trained fixed-feature models.

On digits_classify, MRL and MRL-E (``mrl_digits_cnn``, D=64, M={2, 4, ..., 64}) are trained once
per seed, and for every m a fixed-feature (FF) model of embedding size m (the same DigitsCNN
backbone, one classifier) is trained on its own with the same steps, batches and seed; each row
reports test accuracy at every m (``acc@m``). MRL and FF are trained and checked on the digits
(450 test images) and on Fashion-MNIST at 8x8 (``dataset="fashion_mnist"``, 10,000 test images,
where the one-point tolerance is 100 images rather than 4.5); MRL-E is reported on the digits.
"""
from __future__ import annotations

from zoo.claims import Check, Claim, Row
from zoo_task_digits.task import DEFAULT_STEPS

from .plugin import CLAIM

NESTING = (2, 4, 8, 16, 32, 64)
# "As accurate as" read as: MRL's truncation trails FF by at most one point of test accuracy (4.5 of the 450 test
# images). Fixed with the first version of this claim, before any run, and kept: the paper's claim is equality, and a
# margin moved after seeing results would be tuned to them. 5 seeds (at 3, five of the six checks straddled it).
TOLERANCE = 0.01


def mrl_row(*, seed: int, steps: int, model: str, dataset: str = "digits") -> dict[str, float]:
    """``model`` (``mrl_digits_cnn`` or ``mrl_e_digits_cnn``) trained once on ``dataset``; its accuracy at every
    truncation m."""
    import zoo

    from .train import fit_digits

    _, metrics = fit_digits(lambda: zoo.create(model, nesting=list(NESTING)), seed=seed, steps=steps, dataset=dataset)
    return {f"acc@{m}": metrics[f"accuracy@{m}"] for m in NESTING}


def ff_row(*, seed: int, steps: int, dataset: str = "digits") -> dict[str, float]:
    """One fixed-feature model per m, trained alone on ``dataset`` with the same steps and seed."""
    from .model import fixed_feature_digits_cnn
    from .train import fit_digits

    return {f"acc@{m}": fit_digits(lambda m=m: fixed_feature_digits_cnn(dim=m), seed=seed, steps=steps,
                                   dataset=dataset)[1][f"accuracy@{m}"]
            for m in NESTING}


FASHION = {"dataset": "fashion_mnist"}

REPRODUCTION = Claim(
    plugin="mrl", claim=CLAIM, task="digits_classify", steps=DEFAULT_STEPS, quick_steps=12, seeds=(0, 1, 2, 3, 4),
    rows=[Row("MRL", mrl_row, {"model": "mrl_digits_cnn"}), Row("MRL-E", mrl_row, {"model": "mrl_e_digits_cnn"}),
          Row("FF", ff_row), Row("MRL fashion", mrl_row, {"model": "mrl_digits_cnn", **FASHION}),
          Row("FF fashion", ff_row, FASHION)],
    checks=[Check(row, f"acc@{m}", baseline=base, margin=-TOLERANCE)
            for row, base in (("MRL", "FF"), ("MRL fashion", "FF fashion")) for m in NESTING],
    settings={"embedding_dim": 64, "nesting": list(NESTING), "tolerance": TOLERANCE},
    notes=f"margin -{TOLERANCE} at every m, fixed with the claim's first version before any run and not moved since: "
          "MRL's truncation may trail FF by at most one point of test accuracy (the paper claims 'as accurate as'); "
          "5 seeds, paired by seed; MRL-E is reported only. The checks run on the digits (450 test images: one point "
          "is 4.5 images, and the digits alone left checks inconclusive) and, since issue 14, on Fashion-MNIST at 8x8 "
          "(10,000 test images: one point is 100 images), the same margin on both, fixed before the first Fashion-MNIST "
          "run. A check whose interval still straddles the margin is left inconclusive",
)
