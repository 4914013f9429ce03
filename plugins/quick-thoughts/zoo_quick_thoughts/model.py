"""Quick-Thoughts (Logeswaran & Lee 2018, "An efficient framework for learning sentence representations").

§3: two encoders with the same architecture and separate parameters, f for the input sentence and g for the
candidates. For a sentence s of a batch of consecutive sentences, the candidates are the other sentences of the
batch, and the classifier is

    p(c | s) = exp(f(s) . g(c)) / sum_{c' in batch, c' != s} exp(f(s) . g(c'))

trained by cross-entropy against the true context: the sentences within ``context`` positions of s (one on each
side in the paper), the target mass spread evenly over them. At test time a sentence is [f(s); g(s)].

What differs from the paper and why:

* The candidates leave out s itself (the text's "other sentences"; the authors' code keeps s with score 0).
* A context sentence must be in the same document and the same batch: the wiki leads are short documents
  (33k sentences in 9k leads), not books, so a lead's last sentence has no "next" one. Documents are visited in
  a seeded random order each epoch, their sentences in reading order (batches of consecutive sentences, as in
  the paper, where the corpus is read in order).
* A text of several sentences (a Wikipedia lead, a Lee document) is embedded as the mean of its sentences'
  [f; g] vectors; the paper embeds single sentences.
* Training is bounded by epochs or by CPU seconds (``fit(cpu_budget_s=...)``), for the speed claim; the paper
  trains one epoch of BookCorpus (45M sentences) on a GPU. ``preset="paper"`` gives its sizes (word
  embeddings 300, GRU 1200 per encoder, batch 400, Adam 5e-4, clip 5, sentences cut at 30 words, a 50k
  vocabulary, uniform ±0.1 initialisation); the CPU default is the same model at word 64 / GRU 128.
* No pretrained GloVe embeddings (the paper's "+GloVe" variants) and no bidirectional variant; the
  bag-of-embeddings encoder (``encoder="bow"``) is the paper's cheaper option.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .sentences import SPECIALS, SentenceEncoder, Stream, build_vocabulary, embed_texts, train

log = logging.getLogger(__name__)

# the paper's §4 settings (and the authors' training flags): batch 400, Adam 5e-4, clip 5, 30-word sentences
PAPER = {"word_dim": 300, "hidden": 1200, "batch_size": 400, "lr": 5e-4, "clip": 5.0, "max_len": 30, "context": 1,
         "epochs": 1.0, "min_count": 1, "max_vocab": 50_000, "init_scale": 0.1}
# CPU default: the same model, narrower; a larger learning rate because a CPU run takes hundreds of steps, not 100k
CPU = {"word_dim": 64, "hidden": 128, "batch_size": 400, "lr": 2e-3, "clip": 5.0, "max_len": 30, "context": 1,
       "epochs": 2.0, "min_count": 5, "max_vocab": 50_000, "init_scale": 0.1}
PRESETS = ("cpu", "paper")


def quick_thoughts_loss(u: torch.Tensor, v: torch.Tensor, doc: torch.Tensor | None = None,
                        context: int = 1) -> torch.Tensor:
    """The in-batch classification loss of §3 for a batch of consecutive sentences.

    ``u = f(s)`` and ``v = g(s)`` are (B, D) for the batch's sentences in reading order; ``doc`` (B,) their
    documents (None: one document). Row i scores every other sentence j by u_i . v_j; its target is the
    uniform distribution over the j with 0 < |i - j| <= context in the same document. Rows without any
    context sentence add nothing; the loss is the mean over the others.

    With u = v orthonormal rows every candidate scores 0, so each row's loss is log(B - 1):

    >>> round(float(quick_thoughts_loss(torch.eye(5), torch.eye(5))), 4) == round(float(np.log(4)), 4)
    True
    """
    b = u.shape[0]
    scores = u @ v.T
    pos = torch.arange(b)
    gap = (pos[:, None] - pos[None, :]).abs()
    target = (gap > 0) & (gap <= context)
    if doc is not None:
        target &= doc[:, None] == doc[None, :]
    scores = scores.masked_fill(torch.eye(b, dtype=torch.bool), float("-inf"))  # s is not its own candidate
    logp = F.log_softmax(scores, dim=1)
    has = target.any(1)
    if not bool(has.any()):
        return scores.new_zeros(()) + 0.0 * u.sum() + 0.0 * v.sum()
    weight = target.float() / target.sum(1, keepdim=True).clamp(min=1)
    per_row = -(weight * logp.masked_fill(~target, 0.0)).sum(1)
    return per_row[has].mean()


class QuickThoughts(nn.Module):
    """Two sentence encoders f and g (same architecture, separate parameters) over a word vocabulary.

    ``embed(texts)`` -> (N, 2D): per text the mean over its sentences of [f(s); g(s)]. ``forward`` on a list of
    texts is ``embed``; on ``(ids, lengths)`` it returns [f; g] of those sentences. ``fit(corpus)`` builds the
    vocabulary (words seen ``min_count`` times, at most ``max_vocab``) and trains by :func:`quick_thoughts_loss`.
    """

    embedding_mode = "sentence"

    def __init__(self, vocab: Sequence[str] = (), word_dim: int = 64, hidden: int = 128, encoder: str = "gru",
                 batch_size: int = 400, lr: float = 2e-3, clip: float = 5.0, max_len: int = 30, context: int = 1,
                 epochs: float = 2.0, min_count: int = 5, max_vocab: int | None = 50_000,
                 init_scale: float = 0.1) -> None:
        super().__init__()
        self.word_dim, self.hidden, self.encoder = word_dim, hidden, encoder
        self.batch_size, self.lr, self.clip, self.max_len, self.context = batch_size, lr, clip, max_len, context
        self.epochs, self.min_count, self.max_vocab, self.init_scale = epochs, min_count, max_vocab, init_scale
        self._set_vocab(list(vocab))

    def _set_vocab(self, vocab: list[str]) -> None:
        self.vocab = vocab
        self.index = {w: i + len(SPECIALS) for i, w in enumerate(vocab)}
        size = len(vocab) + len(SPECIALS)
        self.f = SentenceEncoder(size, self.word_dim, self.hidden, self.encoder, self.init_scale)
        self.g = SentenceEncoder(size, self.word_dim, self.hidden, self.encoder, self.init_scale)
        self.dim = 2 * self.f.dim

    def encode(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """[f(s); g(s)] of a batch of sentences given as word ids: (B, 2D)."""
        return torch.cat([self.f(ids, lengths), self.g(ids, lengths)], dim=1)

    def forward(self, x: Any, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return self.encode(x, lengths if lengths is not None else (x != 0).sum(1))
        return self.embed(x)

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, 2D) float32 (module docstring); a text with no word gets a zero row."""
        return embed_texts(self.encode, list(texts), self.index, self.max_len, self.dim)

    def loss(self, ids: torch.Tensor, lengths: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """:func:`quick_thoughts_loss` of a batch of consecutive sentences."""
        return quick_thoughts_loss(self.f(ids, lengths), self.g(ids, lengths), doc, self.context)

    def fit(self, corpus: Any, *, epochs: float | None = None, seed: int = 0, progress: bool = False,
            cpu_budget_s: float | None = None, checkpoint: Any = None, checkpoint_every_s: float | None = None,
            ) -> dict[str, float]:
        """Build the vocabulary of ``corpus`` (a ``TextCorpus``: sentences in reading order and their documents)
        and train for ``epochs`` (default ``self.epochs``) or ``cpu_budget_s`` CPU seconds, whichever ends first
        (with a budget and no ``epochs``, the budget alone). Returns the training figures.
        """
        from .sentences import pad

        torch.manual_seed(seed)
        self._set_vocab(build_vocabulary(corpus.sentences, self.min_count, self.max_vocab))
        stream = Stream.from_corpus(corpus, self.index, self.max_len)
        doc = torch.as_tensor(stream.doc)

        def batch_loss(batch: np.ndarray) -> torch.Tensor:
            ids, lengths = pad([stream.ids[i] for i in batch])
            return self.loss(ids, lengths, doc[batch])

        run = train(self, batch_loss, stream, batch_size=self.batch_size, lr=self.lr, clip=self.clip,
                    epochs=(self.epochs if cpu_budget_s is None else None) if epochs is None else epochs,
                    cpu_budget_s=cpu_budget_s, seed=seed, checkpoint=checkpoint,
                    checkpoint_every_s=checkpoint_every_s, progress=progress)
        self.train_log = run
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabulary rebuilds this model
            self.zoo = dataclasses.replace(prov, model_args={**prov.model_args, "vocab": list(self.vocab)})
        log.info("quick_thoughts: %d steps, %d sentences, %.1f CPU s", run.steps, run.sentences, run.cpu_seconds)
        return {"vocabulary": float(len(self.vocab)), **run.figures()}


def quick_thoughts(vocab: Sequence[str] = (), preset: str = "cpu", encoder: str = "gru", word_dim: int | None = None,
                   hidden: int | None = None, batch_size: int | None = None, lr: float | None = None,
                   clip: float | None = None, max_len: int | None = None, context: int | None = None,
                   epochs: float | None = None, min_count: int | None = None, max_vocab: int | None = None,
                   init_scale: float | None = None) -> QuickThoughts:
    """Quick-Thoughts. ``preset="cpu"``: word 64, GRU 128 per encoder (embedding 256), batch 400, Adam 2e-3,
    2 epochs, min_count 5; ``preset="paper"``: word 300, GRU 1200 (embedding 2400), Adam 5e-4, 1 epoch, 50k
    words. ``encoder="bow"`` sums the word embeddings instead of the GRU. Arguments given override the preset.

    >>> quick_thoughts(preset="paper").hidden, quick_thoughts(hidden=32).dim
    (1200, 64)
    """
    if preset not in PRESETS:
        raise ValueError(f"quick_thoughts preset must be one of {PRESETS}, got {preset!r}")
    given = {"word_dim": word_dim, "hidden": hidden, "batch_size": batch_size, "lr": lr, "clip": clip, "max_len": max_len,
             "context": context, "epochs": epochs, "min_count": min_count, "max_vocab": max_vocab, "init_scale": init_scale}
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in given.items() if v is not None}}
    return QuickThoughts(vocab, encoder=encoder, **args)
