"""Concrete sentence spaces (Grefenstette, Sadrzadeh, Clark, Coecke & Pulman 2011): sentences as vectors of N (x) N.

The categorical model of Coecke, Sadrzadeh & Clark gives a sentence's meaning as the map of its grammar applied to
the tensor product of its words' vectors; this paper makes it concrete with a corpus. Nouns are co-occurrence
vectors in N (basis: context words). A transitive verb is the matrix sum over the corpus's (subject, object) pairs of
subject (x) object, a vector of N (x) N whose basis pairs are (context word as subject, context word as object): the
role-augmented pairs of the paper. A transitive sentence is verb (.) (subject (x) object) (pointwise product), again in
N (x) N. An intransitive verb is the sum of its subjects' vectors in N, its sentence verb (.) subject; N is embedded
in N (x) N as ``n -> n (x) 1 / sqrt(d)`` (the object slot left uniform), so sentences of both structures live in one
space and compare by their inner product. Similarity is the inner product of unit-normalised sentence vectors
(cosine), as Grefenstette & Sadrzadeh's experiments (EMNLP 2011) compare sentences.

What differs, and what comes from where: the paper's text beyond its abstract was not read; the construction above
follows the catalog entry and the brief, and the N -> N (x) N embedding is this plugin's choice (the chapter says "an
embedding", without giving it here). Noun vectors weight counts by P(c | w) / P(c) (Mitchell & Lapata's ratio, used
by the EMNLP 2011 experiments) over a window inside the sentence; the basis is the ``dim`` most frequent context
words (CPU default 100; ``preset="paper"`` 2,000 as in the EMNLP 2011 BNC experiments). Grammatical roles come from
a "subject verb [object]" text: no parser; a longer text is not parsed and gets the sum of its nouns' vectors (x) 1.
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo_task_embedding_quality.data import tokenize

log = logging.getLogger(__name__)

CPU: dict[str, Any] = {"dim": 100, "window": 5, "min_count": 1}
PAPER: dict[str, Any] = {"dim": 2000, "window": 5, "min_count": 1}  # EMNLP 2011: 2,000 context words of the BNC
PRESETS = ("cpu", "paper")


class ConcreteSentenceSpace(nn.Module):
    """Noun vectors, verb tensors and the sentences they compose (module docstring).

    ``fit(corpus)`` counts the corpus: noun vectors over the ``dim``-word basis, and for every sentence read as
    (subject, verb[, object]) the verb's sum of subject (x) object (transitive) or of subjects (intransitive).
    ``sentence_vec(subj, verb, obj=None)`` is the (dim*dim,) sentence vector; ``embed(texts)`` parses
    "subject verb object" / "subject verb" texts into it (a one-word text: that word's vector (x) 1).
    """

    embedding_mode = "svo"

    def __init__(self, dim: int = 100, window: int = 5, min_count: int = 1) -> None:
        super().__init__()
        self.dim, self.window, self.min_count = dim, window, min_count
        self.basis: list[str] = []
        self.words: dict[str, int] = {}
        self.register_buffer("vectors", torch.zeros(0, dim, dtype=torch.float64))
        self.transitive: dict[str, torch.Tensor] = {}  # verb -> (dim, dim) sum of subject (x) object
        self.intransitive: dict[str, torch.Tensor] = {}  # verb -> (dim,) sum of subjects

    def fit(self, corpus: Any, *, seed: int = 0, progress: Any = None, **_: Any) -> dict[str, float]:
        """Count ``corpus`` (a ``TextCorpus`` or token lists); deterministic (``seed`` is unused: nothing is drawn).

        Three-token sentences are (subject, verb, object), two-token ones (subject, verb); others only feed
        the noun vectors."""
        t0 = time.perf_counter()
        sents = [list(s) for s in (corpus.sentences if hasattr(corpus, "sentences") else corpus)]
        counts = Counter(w for s in sents for w in s)
        vocab = sorted((w for w, c in counts.items() if c >= self.min_count), key=lambda w: (-counts[w], w))
        self.words = {w: i for i, w in enumerate(vocab)}
        self.basis = vocab[: self.dim]
        col = {w: i for i, w in enumerate(self.basis)}
        co = np.zeros((len(vocab), len(self.basis)))
        for s in sents:
            for i, w in enumerate(s):
                if w not in self.words:
                    continue
                for j in range(max(0, i - self.window), min(len(s), i + self.window + 1)):
                    if j != i and s[j] in col:
                        co[self.words[w], col[s[j]]] += 1
        # P(c | w) / P(c): the ratio weighting of Mitchell & Lapata (2008), kept when zero (no log, no clipping)
        p_c = co.sum(0) / max(co.sum(), 1.0)
        p_cw = co / np.maximum(co.sum(1, keepdims=True), 1.0)
        vec = np.where(p_c > 0, p_cw / np.where(p_c > 0, p_c, 1.0), 0.0)
        self.vectors = torch.from_numpy(np.pad(vec, ((0, 0), (0, self.dim - vec.shape[1]))))
        self.transitive, self.intransitive = {}, {}
        for s in sents:
            if len(s) == 3 and s[0] in self.words and s[2] in self.words:
                m = self.transitive.setdefault(s[1], torch.zeros(self.dim, self.dim, dtype=torch.float64))
                m += torch.outer(self.noun(s[0]), self.noun(s[2]))
            elif len(s) == 2 and s[0] in self.words:
                v = self.intransitive.setdefault(s[1], torch.zeros(self.dim, dtype=torch.float64))
                v += self.noun(s[0])
        return {"vocabulary": float(len(vocab)), "basis": float(len(self.basis)),
                "transitive_verbs": float(len(self.transitive)), "intransitive_verbs": float(len(self.intransitive)),
                "fit_seconds": time.perf_counter() - t0}

    def noun(self, word: str) -> torch.Tensor:
        """The (dim,) co-occurrence vector of ``word`` (zeros when unseen)."""
        i = self.words.get(word)
        return self.vectors[i] if i is not None else torch.zeros(self.dim, dtype=torch.float64)

    def embed_intransitive(self, v: torch.Tensor) -> torch.Tensor:
        """N -> N (x) N: ``v (x) 1 / sqrt(dim)`` (the object slot uniform; norms kept), flattened."""
        return torch.outer(v, torch.full((self.dim,), self.dim ** -0.5, dtype=v.dtype)).reshape(-1)

    def sentence_vec(self, subj: str, verb: str, obj: str | None = None) -> torch.Tensor:
        """The (dim*dim,) float64 vector of "subj verb obj" (or "subj verb"): verb (.) (subj (x) obj), or the
        intransitive verb (.) subj embedded in N (x) N. A verb never seen in that structure gives zeros."""
        s = self.noun(subj)
        if obj is None:
            v = self.intransitive.get(verb)
            return self.embed_intransitive(v * s if v is not None else torch.zeros_like(s))
        m = self.transitive.get(verb)
        if m is None:
            return torch.zeros(self.dim * self.dim, dtype=torch.float64)
        return (m * torch.outer(s, self.noun(obj))).reshape(-1)

    @staticmethod
    def similarity(a: torch.Tensor, b: torch.Tensor) -> float:
        """The inner product of the unit-normalised sentence vectors (0 when one is zero)."""
        na, nb = float(a.norm()), float(b.norm())
        return float(a @ b) / (na * nb) if na > 0 and nb > 0 else 0.0

    @torch.no_grad()
    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, dim*dim) float32: "s v o" and "s v" texts composed; other texts: the sum of their nouns (x) 1."""
        out = torch.zeros(len(texts), self.dim * self.dim)
        for n, t in enumerate(texts):
            toks = tokenize(t)
            if len(toks) in (2, 3):
                out[n] = self.sentence_vec(*toks).float()
            elif toks:
                out[n] = self.embed_intransitive(sum((self.noun(w) for w in toks), torch.zeros(self.dim,
                                                     dtype=torch.float64))).float()
        return out

    def forward(self, texts: list[str]) -> torch.Tensor:
        return self.embed(texts)


def concrete_sentence_space(preset: str = "cpu", dim: int | None = None, window: int | None = None,
                            min_count: int | None = None) -> ConcreteSentenceSpace:
    """Concrete sentence space. ``preset="cpu"``: a 100-word basis (sentence vectors of 10,000); ``preset="paper"``:
    2,000 (EMNLP 2011). Arguments given override the preset.

    >>> concrete_sentence_space().dim, concrete_sentence_space(preset="paper").dim
    (100, 2000)
    """
    if preset not in PRESETS:
        raise ValueError(f"concrete_sentence_space preset must be one of {PRESETS}, got {preset!r}")
    args = {**(PAPER if preset == "paper" else CPU),
            **{k: v for k, v in {"dim": dim, "window": window, "min_count": min_count}.items() if v is not None}}
    return ConcreteSentenceSpace(**args)
