"""The generative baseline Quick-Thoughts is compared with: skip-thought vectors (Kiros et al. 2015).

An encoder reads sentence s; two GRU decoders, one for the previous sentence and one for the next, generate
those sentences word by word (teacher forcing), each word by a softmax over the whole vocabulary; the loss is the
summed cross-entropy of their words (and an end token). The test-time vector is the encoder's last state.

The encoder is :class:`~zoo_quick_thoughts.sentences.SentenceEncoder` at Quick-Thoughts' f size, on the same
vocabulary, batches, optimiser and budget. Simplification: the decoders start from the encoder state (skip-thoughts
also feeds it to every gate at every step); word embeddings are shared by the encoder and the decoders' inputs, and
one output layer by both decoders.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .model import CPU
from .sentences import EOS, PAD, SPECIALS, SentenceEncoder, Stream, build_vocabulary, embed_texts, pad, train

log = logging.getLogger(__name__)


class SkipThoughts(nn.Module):
    """Encoder + previous/next-sentence decoders (module docstring); ``embed(texts)`` -> (N, hidden)."""

    embedding_mode = "sentence"

    def __init__(self, vocab: Sequence[str] = (), word_dim: int = CPU["word_dim"], hidden: int = CPU["hidden"],
                 batch_size: int = CPU["batch_size"], lr: float = CPU["lr"], clip: float = CPU["clip"],
                 max_len: int = CPU["max_len"], epochs: float = CPU["epochs"], min_count: int = CPU["min_count"],
                 max_vocab: int | None = CPU["max_vocab"], init_scale: float = CPU["init_scale"]) -> None:
        super().__init__()
        self.word_dim, self.hidden, self.batch_size, self.lr, self.clip = word_dim, hidden, batch_size, lr, clip
        self.max_len, self.epochs, self.min_count, self.max_vocab, self.init_scale = (max_len, epochs, min_count,
                                                                                      max_vocab, init_scale)
        self._set_vocab(list(vocab))

    def _set_vocab(self, vocab: list[str]) -> None:
        self.vocab = vocab
        self.index = {w: i + len(SPECIALS) for i, w in enumerate(vocab)}
        size = len(vocab) + len(SPECIALS)
        self.encoder = SentenceEncoder(size, self.word_dim, self.hidden, "gru", self.init_scale)
        self.decode_prev = nn.GRU(self.word_dim, self.hidden, batch_first=True)
        self.decode_next = nn.GRU(self.word_dim, self.hidden, batch_first=True)
        self.out = nn.Linear(self.hidden, size)
        self.dim = self.hidden

    def forward(self, x: Any, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return self.encoder(x, lengths if lengths is not None else (x != 0).sum(1))
        return self.embed(x)

    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        return embed_texts(self.encoder, list(texts), self.index, self.max_len, self.dim)

    def _decode_loss(self, gru: nn.GRU, state: torch.Tensor, targets: list[list[int]]) -> tuple[torch.Tensor, int]:
        # input: EOS then the words; output: the words then EOS (teacher forcing)
        inp, lengths = pad([[EOS] + t for t in targets])
        gold, _ = pad([t + [EOS] for t in targets])
        x = self.encoder.words(inp)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        h, _ = gru(packed, state.unsqueeze(0).contiguous())
        h, _ = pad_packed_sequence(h, batch_first=True)
        logits = self.out(h)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1), ignore_index=PAD, reduction="sum")
        return loss, int(lengths.sum())

    def loss(self, stream: Stream, batch: np.ndarray) -> torch.Tensor:
        """Mean per-word cross-entropy of the previous and next sentences (same document) of the batch's sentences."""
        ids, lengths = pad([stream.ids[i] for i in batch])
        state = self.encoder(ids, lengths)
        total, words = state.new_zeros(()), 0
        n = len(stream.ids)
        for gru, step in ((self.decode_prev, -1), (self.decode_next, 1)):
            nb = batch + step
            ok = np.flatnonzero((nb >= 0) & (nb < n))
            ok = ok[stream.doc[nb[ok]] == stream.doc[batch[ok]]]
            if len(ok):
                part, count = self._decode_loss(gru, state[torch.as_tensor(ok)], [stream.ids[j] for j in nb[ok]])
                total, words = total + part, words + count
        return total / max(words, 1)

    def fit(self, corpus: Any, *, epochs: float | None = None, seed: int = 0, progress: bool = False,
            cpu_budget_s: float | None = None, checkpoint: Any = None, checkpoint_every_s: float | None = None,
            ) -> dict[str, float]:
        """As :meth:`QuickThoughts.fit <zoo_quick_thoughts.model.QuickThoughts.fit>`, with the generative loss."""
        torch.manual_seed(seed)
        self._set_vocab(build_vocabulary(corpus.sentences, self.min_count, self.max_vocab))
        stream = Stream.from_corpus(corpus, self.index, self.max_len)
        run = train(self, lambda batch: self.loss(stream, batch), stream, batch_size=self.batch_size, lr=self.lr,
                    clip=self.clip, epochs=(self.epochs if cpu_budget_s is None else None) if epochs is None else epochs,
                    cpu_budget_s=cpu_budget_s, seed=seed, checkpoint=checkpoint, checkpoint_every_s=checkpoint_every_s,
                    progress=progress)
        self.train_log = run
        log.info("skip-thoughts: %d steps, %d sentences, %.1f CPU s", run.steps, run.sentences, run.cpu_seconds)
        return {"vocabulary": float(len(self.vocab)), **run.figures()}
