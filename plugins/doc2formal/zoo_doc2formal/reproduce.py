"""``zoo reproduce doc2formal``: learned correspondences against lexical-overlap ranking on code_text doc2sig.

Every row is ``code_text.evaluate(row_model, mode="doc2sig", seed=seed, baselines=[])``: the task's deterministic
split (1,570 train / 417 test pairs on CPython 3.11), each test description ranking all 417 test signatures. The
seed varies doc2formal's training randomness only (jackknife folds, reranker initialisation, minibatch order); the
lexical baselines (BM25 via bm25s, TF-IDF bag of words) are deterministic, so their rows repeat one value per seed
(computed once per process) and the paired interval is the spread of doc2formal's training.
"""
from __future__ import annotations

from functools import cache

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_code_text import task

from .model import CPU
from .plugin import CLAIM

METRICS = ("acc@1", "acc@5", "mrr", "fit_seconds")
MARGIN = 0.05
STEPS, QUICK_STEPS = 300, 30


def _keep(metrics: dict[str, float]) -> dict[str, float]:
    return {k: float(metrics[k]) for k in METRICS if k in metrics}


def doc2formal_row(*, seed: int, quick: bool, steps: int, rerank: bool = True) -> dict[str, float]:
    """doc2formal (``rerank=False``: Model 1 alone) fit on the train split and scored by the task."""
    model = zoo.create("doc2formal", rerank=rerank)
    return _keep(task.evaluate(model, mode="doc2sig", seed=seed, steps=steps, baselines=[]).metrics)


@cache
def _lexical(name: str) -> dict[str, float]:
    return _keep(task.evaluate(task.build_baseline(name), mode="doc2sig", seed=0, baselines=[]).metrics)


def lexical_row(*, seed: int, quick: bool, name: str) -> dict[str, float]:
    """The task's ``bm25`` or ``bow`` baseline (deterministic: one evaluation per process)."""
    return dict(_lexical(name))


REPRODUCTION = Claim(
    plugin="doc2formal", claim=CLAIM, task="code_text", seeds=(0, 1, 2, 3, 4), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("doc2formal", doc2formal_row),
          Row("bm25", lexical_row, {"name": "bm25"}),
          Row("bow", lexical_row, {"name": "bow"}),
          Row("model1_only", doc2formal_row, {"rerank": False})],
    checks=[Check("doc2formal", m, baseline=b, margin=MARGIN) for m in ("acc@1", "mrr") for b in ("bm25", "bow")],
    settings={"doc2formal": dict(CPU), "steps": STEPS},
    task_options={"mode": "doc2sig"},
    notes=f"margins fixed before the first run: doc2formal - baseline >= {MARGIN} for acc@1 and for MRR, against BM25 "
          "and against TF-IDF bag of words (4 checks). The test split is fixed, so the seeds' interval does not "
          "cover the sampling of the 417 test queries; 0.05 is twice the binomial standard error of acc@1 over 417 "
          "queries at 0.4 (0.024), so a gain that clears it is not an artefact of which queries were drawn. The "
          "baselines are deterministic (one value per seed); doc2formal's seeds vary its folds, initialisation and "
          "minibatches. model1_only (the translation model without the reranker) and acc@5 are reported only.",
)
