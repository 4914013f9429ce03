"""``zoo reproduce concrete-sentence-space``: one space for sentences of two structures, and svo-mode disambiguation.

Per seed: (1) embedding_quality's svo mode, ``evaluate(model, mode="svo", seed=seed, baselines=[])``: the model is fit
on the task's planted SVO corpus and scored by ``svo_spearman``; (2) the cross-structure items of
:func:`~.structures.mixed_svo` (the same corpus with intransitive uses added): Spearman of the inner product of
unit-normalised sentence vectors vs the truth, over transitive-vs-intransitive pairs (``cross_spearman``) and each
direction. The additive baseline is the task's ``ppmi_svd`` (mean of the words' PPMI+SVD vectors; dimension 100,
the noun space's, window 5) fit on the same corpus; "additive (co-occurrence)" averages the model's own noun
vectors (the same vectors, composed by the mean instead of the tensor map): reported only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_embedding_quality import metrics as M
from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.baselines import build_baseline
from zoo_task_embedding_quality.data import tokenize

from .model import CPU
from .plugin import CLAIM
from .structures import INTRANSITIVE, mixed_svo

CROSS_FLOOR, CROSS_MARGIN, SVO_MARGIN = 0.5, 0.1, -0.02
CONCRETE, ADDITIVE, COOC = "concrete_sentence_space", "additive (ppmi_svd mean)", "additive (co-occurrence mean)"


def cross_scores(model: Any, items: list[tuple[str, str, float]]) -> dict[str, float]:
    """Spearman of cos(target, landmark) vs truth over all items, and over each target structure."""
    a = M.as_matrix(model.embed([t for t, _, _ in items]))
    b = M.as_matrix(model.embed([lm for _, lm, _ in items]))
    cos = (M.unit_rows(a) * M.unit_rows(b)).sum(1)
    truth = np.array([t for *_, t in items])
    trans = np.array([t.count(" ") == 2 for t, _, _ in items])
    return {"cross_spearman": M.spearman(cos, truth), "cross_transitive_target": M.spearman(cos[trans], truth[trans]),
            "cross_intransitive_target": M.spearman(cos[~trans], truth[~trans])}


class _CoocMean:
    """The model's own noun vectors composed additively (the mean over the text's words)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([np.mean([self.model.noun(w).numpy() for w in tokenize(t)], 0) for t in texts])


def _build(row: str, corpus: Any, seed: int) -> Any:
    if row == ADDITIVE:
        return build_baseline("ppmi_svd", data=corpus, seed=seed, dim=CPU["dim"], window=CPU["window"], min_count=1)
    model = zoo.create("concrete_sentence_space")
    model.fit(corpus, seed=seed)
    return model if row == CONCRETE else _CoocMean(model)


def sentence_row(*, seed: int, quick: bool, row: str) -> dict[str, float]:
    """``row``'s svo-mode and cross-structure figures for ``seed`` (``quick`` changes nothing: each seed takes ~2 s)."""
    data = mixed_svo(seed=seed)
    if row == CONCRETE:
        out = {"svo_spearman": float(task.evaluate(zoo.create(CONCRETE), mode="svo", seed=seed,
                                                   baselines=[]).metrics["svo_spearman"])}
    else:
        out = task.svo_scores(_build(row, data.svo.corpus, seed), data.svo)
    return {**out, **cross_scores(_build(row, data.corpus, seed), data.items)}


REPRODUCTION = Claim(
    plugin="concrete-sentence-space", claim=CLAIM, task="embedding_quality", seeds=(0, 1, 2, 3, 4),
    rows=[Row(CONCRETE, sentence_row, {"row": CONCRETE}), Row(ADDITIVE, sentence_row, {"row": ADDITIVE}),
          Row(COOC, sentence_row, {"row": COOC})],
    checks=[Check(CONCRETE, "cross_spearman", margin=CROSS_FLOOR),
            Check(CONCRETE, "cross_spearman", baseline=ADDITIVE, margin=CROSS_MARGIN),
            Check(CONCRETE, "svo_spearman", baseline=ADDITIVE, margin=SVO_MARGIN)],
    settings={"concrete": dict(CPU), "intransitive_share": INTRANSITIVE,
              "additive": {"dim": CPU["dim"], "window": CPU["window"], "min_count": 1}},
    task_options={"mode": "svo"},
    notes=f"margins fixed before the recorded run: cross_spearman (768 transitive/intransitive pairs; binary truth, so "
          f"a perfect ranking scores 0.866 and chance 0) >= {CROSS_FLOOR} (the catalog's claim is that sentences of "
          f"different structures are comparable by inner product: most of the ceiling, far above chance) and concrete "
          f"- additive >= {CROSS_MARGIN} (the additive mean also puts sentences of any length in one space: the "
          f"tensor space must compare them better, by more than seed noise); svo_spearman "
          f"concrete - additive >= {SVO_MARGIN} (the task's landmark disambiguation: non-inferiority, since a pilot "
          f"(seeds 0-1) showed both at or near the 0.866 ceiling on the task's corpus, where subject and object both "
          f"carry the verb's sense; 0.02 is a handful of the 192 items). The same pilot gave cross_spearman 0.87 (concrete) "
          f"vs 0.27 (additive, whose intransitive-target pairs rank the wrong landmark first). The role-order test in "
          f"the plugin's tests shows what a mean cannot do (\"s v o\" and \"o v s\" get one vector).",
)
