"""Sentences of two grammatical structures from the task's planted SVO corpus, and their cross-structure truth.

The task's ``svo`` corpus has transitive sentences only. :func:`mixed_svo` adds the intransitive use of every verb
(and landmark): each corpus sentence "s v o" is also, with probability ``intransitive``, said as "s v" (the object
dropped, as "the company runs"). Items pair a sentence of one structure with a landmark sentence of the other:
"s v o" with "s landmark" and "s v" with "s landmark o", truth 1 when the landmark has the sense of the target (set
by its object, and by its subject: both belong to one sense in the task's generator), else 0. This belongs in the
task's ``planted.svo`` (a ``structures`` option) once a second plugin needs it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zoo_task_embedding_quality import planted
from zoo_task_embedding_quality.data import TextCorpus

__all__ = ["MixedSVO", "mixed_svo", "INTRANSITIVE"]

INTRANSITIVE = 0.3


@dataclass(frozen=True)
class MixedSVO:
    svo: planted.SVO  # the task's data (its items are transitive-transitive)
    corpus: TextCorpus  # the task's sentences plus the intransitive ones
    items: list[tuple[str, str, float]]  # (target text, landmark text of the other structure, truth)


def mixed_svo(*, seed: int = 0, intransitive: float = INTRANSITIVE) -> MixedSVO:
    """The task's ``planted.svo(seed=seed)`` with intransitive sentences added and cross-structure items.

    >>> m = mixed_svo(); len(m.items), sorted({t for *_, t in m.items}), m.items[0][0].count(" ")
    (384, [0.0, 1.0], 2)
    """
    data = planted.svo(seed=seed)
    rng = np.random.default_rng([seed, 76])  # its own stream: the task's corpus is left as the task draws it
    sents = [list(s) for s in data.corpus.sentences]
    sents += [s[:2] for s in data.corpus.sentences if rng.random() < intransitive]
    corpus = TextCorpus("svo+intransitive", sents, list(range(len(sents))), [" ".join(s) for s in sents],
                        {**data.info, "intransitive": intransitive, "sentences": len(sents)})
    items = []
    for (s, v, o), lm, truth in data.items:
        items.append((f"{s} {v} {o}", f"{s} {lm}", truth))  # transitive target, intransitive landmark
        items.append((f"{s} {v}", f"{s} {lm} {o}", truth))  # intransitive target, transitive landmark
    return MixedSVO(data, corpus, items)
