"""``zoo reproduce word2vec``: skip-gram vs PPMI+SVD on the embedding_quality wiki corpus, in word mode.

Every row is ``embedding_quality.evaluate(row_model, mode="word", corpus="wiki", seed=seed, baselines=[])``:
word2vec fits on the 10,033 Wikipedia leads (vocabulary at min_count 5), PPMI+SVD (the task's baseline) fits
on the same corpus at the same dimension and window, and the frozen MiniLM is scored on the same vocabulary
(its vectors of the vocabulary are computed once per process: they do not depend on the seed). The seed draws
the training randomness and the 2,000 analogy questions scored (of the 6,039 inside the vocabulary).
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.baselines import MiniLM, build_baseline

from .model import CPU
from .plugin import CLAIM

CORPUS, QUICK_CORPUS = "wiki", "lee"
QUICK_EPOCHS = 2
METRICS = ("ws353", "simlex", "analogy", "analogy_semantic", "analogy_syntactic", "analogy_coverage", "ws353_coverage",
           "fit_seconds", "words_per_second")
ANALOGY_MARGIN, WS353_MARGIN, SECONDS_LIMIT = 0.02, -0.03, 60.0


def _keep(metrics: dict[str, float]) -> dict[str, float]:
    return {k: float(metrics[k]) for k in METRICS if k in metrics}


def word2vec_row(*, seed: int, quick: bool, name: str) -> dict[str, float]:
    """``name`` (word2vec_sgns / word2vec_cbow, CPU defaults) fit on the corpus and scored by the task."""
    model = zoo.create(name)
    res = task.evaluate(model, mode="word", corpus=QUICK_CORPUS if quick else CORPUS, seed=seed, baselines=[],
                        steps=QUICK_EPOCHS if quick else None)
    return _keep(res.metrics)


def ppmi_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's PPMI+SVD at word2vec's dimension and window, fit on the same corpus (its fit timed)."""
    corpus = QUICK_CORPUS if quick else CORPUS
    base = build_baseline("ppmi_svd", dim=CPU["dim"], window=CPU["window"], min_count=task.WORD_MIN_COUNT[corpus])
    return _keep(task.evaluate(base, mode="word", corpus=corpus, seed=seed, baselines=[]).metrics)


class _CachedMiniLM:
    """The frozen MiniLM with its vectors of each text computed once per process (they do not depend on the seed)."""

    def __init__(self) -> None:
        self.model, self.seen = MiniLM(), {}

    def embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if new:
            self.seen.update(zip(new, self.model.embed(new), strict=True))
        return np.stack([self.seen[t] for t in texts])


@cache
def _minilm() -> _CachedMiniLM:
    return _CachedMiniLM()


def minilm_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The frozen all-MiniLM-L6-v2 on the same vocabulary and questions (reported only: far more data)."""
    return _keep(task.evaluate(_minilm(), mode="word", corpus=QUICK_CORPUS if quick else CORPUS, seed=seed,
                               baselines=[], train_model=False).metrics)


SETTINGS: dict[str, Any] = {"corpus": CORPUS, "quick_corpus": QUICK_CORPUS, "quick_epochs": QUICK_EPOCHS,
                            "word2vec": dict(CPU), "ppmi_svd": {"dim": CPU["dim"], "window": CPU["window"]}}

REPRODUCTION = Claim(
    plugin="word2vec", claim=CLAIM, task="embedding_quality", seeds=(0, 1, 2),
    rows=[Row("word2vec_sgns", word2vec_row, {"name": "word2vec_sgns"}),
          Row("ppmi_svd", ppmi_row),
          Row("word2vec_cbow", word2vec_row, {"name": "word2vec_cbow"}),
          Row(task.MINILM_ROW, minilm_row)],
    checks=[Check("word2vec_sgns", "analogy", baseline="ppmi_svd", margin=ANALOGY_MARGIN),
            Check("word2vec_sgns", "ws353", baseline="ppmi_svd", margin=WS353_MARGIN),
            Check("word2vec_sgns", "fit_seconds", margin=SECONDS_LIMIT, higher=False)],
    settings=SETTINGS,
    task_options={"corpus": CORPUS},
    notes=f"margins fixed before the first run: analogy (3CosAdd, in-vocabulary Google questions, 2,000 drawn per "
          f"seed) SGNS - PPMI+SVD >= {ANALOGY_MARGIN} (the papers' claim is an analogy gain; 0.02 is about twice the "
          f"binomial standard error of one 2,000-question sample at accuracy 0.1-0.3, so a smaller gap is not a "
          f"gain); WS353 SGNS - PPMI+SVD >= {WS353_MARGIN} (non-inferiority: the papers claim no similarity gain "
          f"over count vectors, the check guards that the analogy gain is not bought with worse similarity; 0.03 is "
          f"half the standard error of a Spearman over the ~250 in-vocabulary pairs); SGNS fit (5 epochs, one core) "
          f"<= {SECONDS_LIMIT:g} s ('in seconds', on a shared 2-core machine). CBOW and MiniLM (pretrained on far "
          "more data) are reported only; SimLex and the analogy sections reported only.",
)
