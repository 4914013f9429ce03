"""Sentences as word ids, the sentence encoder both models share, and the training loop they share.

Everything here is method-neutral: Quick-Thoughts (``model.py``) and the generative skip-thought baseline
(``skipthought.py``) read the same corpus through the same vocabulary, encode sentences with the same
:class:`SentenceEncoder` and train under the same CPU-second budget, so a table row differs from another only
by the objective.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from zoo_task_embedding_quality.data import split_sentences, tokenize

log = logging.getLogger(__name__)

PAD, UNK, EOS = 0, 1, 2  # ids before the words; EOS also starts a decoded sentence
SPECIALS = ("<pad>", "<unk>", "<eos>")
EMBED_CHUNK = 256  # sentences encoded at once by embed (sorted by length, so little padding)


def build_vocabulary(sentences: Sequence[Sequence[str]], min_count: int, max_vocab: int | None = None) -> list[str]:
    """Words seen ``min_count`` times, most frequent first (ties alphabetical), at most ``max_vocab`` of them."""
    counts: dict[str, int] = {}
    for s in sentences:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    words = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count]
    return words[:max_vocab] if max_vocab else words


def to_ids(tokens: Sequence[str], index: dict[str, int], max_len: int) -> list[int]:
    """Word ids of ``tokens`` (unknown words -> UNK), cut at ``max_len``; an empty sentence becomes [UNK]."""
    ids = [index.get(w, UNK) for w in tokens[:max_len]]
    return ids or [UNK]


def pad(seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) LongTensor padded with PAD and the (B,) lengths."""
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    out = torch.full((len(seqs), int(lengths.max()) if len(seqs) else 0), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.as_tensor(s, dtype=torch.long)
    return out, lengths


class SentenceEncoder(nn.Module):
    """Word embeddings then a GRU whose last state is the sentence vector, or the sum of the embeddings ("bow").

    Quick-Thoughts §3 (and the skip-thought encoder the baseline uses): ``ids (B, T), lengths (B,) -> (B, D)``
    with D the GRU width, or the word dimension for "bow". Embeddings start uniform in ±``init_scale``.
    """

    def __init__(self, vocab_size: int, word_dim: int, hidden: int, kind: str = "gru", init_scale: float = 0.1) -> None:
        super().__init__()
        if kind not in ("gru", "bow"):
            raise ValueError(f"encoder must be 'gru' or 'bow', got {kind!r}")
        self.kind = kind
        self.words = nn.Embedding(vocab_size, word_dim, padding_idx=PAD)
        with torch.no_grad():
            self.words.weight.uniform_(-init_scale, init_scale)
            self.words.weight[PAD] = 0.0
        self.gru = nn.GRU(word_dim, hidden, batch_first=True) if kind == "gru" else None
        self.dim = hidden if kind == "gru" else word_dim

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.words(ids)
        if self.gru is None:
            return x.sum(1)  # PAD rows are zero
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return h[-1]


def embed_texts(encode: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], texts: Sequence[str],
                index: dict[str, int], max_len: int, dim: int) -> torch.Tensor:
    """(N, dim): per text the mean of ``encode`` over its sentences (the task's sentence split and tokens).

    A text with no token gets a zero row (the task scores it as a miss). Sentences are encoded in chunks sorted
    by length, so the padding costs little.
    """
    owner, seqs = [], []
    for n, t in enumerate(texts):
        for s in split_sentences(t):
            toks = tokenize(s)
            if toks:
                owner.append(n)
                seqs.append(to_ids(toks, index, max_len))
    out = torch.zeros(len(texts), dim)
    if not seqs:
        return out
    vecs = torch.zeros(len(seqs), dim)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    with torch.no_grad():
        for k in range(0, len(order), EMBED_CHUNK):
            pick = order[k:k + EMBED_CHUNK]
            ids, lengths = pad([seqs[i] for i in pick])
            vecs[pick] = encode(ids, lengths).float()
    own = torch.as_tensor(owner)
    out.index_add_(0, own, vecs)
    return out / torch.bincount(own, minlength=len(texts)).clamp(min=1).unsqueeze(1).float()


@dataclass
class Stream:
    """A corpus as word ids in reading order: ``ids[i]`` is sentence i, ``doc[i]`` its document."""

    ids: list[list[int]]
    doc: np.ndarray

    @classmethod
    def from_corpus(cls, corpus: Any, index: dict[str, int], max_len: int) -> Stream:
        sentences = corpus.sentences if hasattr(corpus, "sentences") else list(corpus)
        doc = np.asarray(corpus.doc_of if hasattr(corpus, "doc_of") else range(len(sentences)), dtype=np.int64)
        return cls([to_ids(s, index, max_len) for s in sentences], doc)

    def epoch_order(self, rng: np.random.Generator) -> np.ndarray:
        """Sentence indices with the documents in a random order and each document's sentences in reading order.

        Consecutive sentences stay neighbours (what both objectives learn from); only the order of documents moves
        between epochs, so a batch mixes a few documents rather than always the same ones.
        """
        starts = np.flatnonzero(np.r_[True, self.doc[1:] != self.doc[:-1]])
        ends = np.r_[starts[1:], len(self.doc)]
        return np.concatenate([np.arange(starts[d], ends[d]) for d in rng.permutation(len(starts))])

    def batches(self, batch_size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """One epoch of batches: consecutive runs of ``batch_size`` sentences of :meth:`epoch_order`."""
        order = self.epoch_order(rng)
        for k in range(0, len(order), batch_size):
            yield order[k:k + batch_size]


@dataclass
class TrainLog:
    """What :func:`train` reports: steps, sentences seen, CPU seconds of training, the loss curve, checkpoints."""

    steps: int = 0
    sentences: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    losses: list[float] | None = None
    checkpoints: list[dict[str, float]] | None = None

    def figures(self) -> dict[str, float]:
        tail = self.losses[-10:] if self.losses else [float("nan")]
        return {"train_steps": float(self.steps), "train_sentences": float(self.sentences),
                "train_cpu_seconds": self.cpu_seconds, "train_wall_seconds": self.wall_seconds,
                "sentences_per_cpu_second": self.sentences / max(self.cpu_seconds, 1e-9),
                "final_train_loss": float(np.mean(tail))}


def train(model: nn.Module, loss_fn: Callable[[np.ndarray], torch.Tensor], stream: Stream, *, batch_size: int,
          lr: float, clip: float, epochs: float | None, cpu_budget_s: float | None, seed: int,
          checkpoint: Callable[[float, int], dict[str, float]] | None = None, checkpoint_every_s: float | None = None,
          progress: bool = False) -> TrainLog:
    """Adam on ``loss_fn(batch indices)`` with the gradient norm clipped at ``clip`` (Quick-Thoughts §4's optimiser).

    Stops after ``epochs`` (fractions allowed) or when the training has used ``cpu_budget_s`` seconds of process
    CPU time, whichever comes first. CPU time, not wall time, because the machines this runs on are shared: the
    budget is the work done, whatever else runs. ``checkpoint(cpu_seconds, sentences)`` is called (its time not
    counted) every ``checkpoint_every_s`` CPU seconds and at the end; its figures are kept in the log.
    """
    if epochs is None and cpu_budget_s is None:
        raise ValueError("train needs epochs= or cpu_budget_s=")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    out = TrainLog(losses=[], checkpoints=[])
    max_steps = None if epochs is None else int(round(epochs * -(-len(stream.ids) // batch_size)))
    next_ck = checkpoint_every_s if checkpoint is not None and checkpoint_every_s else None
    w0, spent, c0 = time.perf_counter(), 0.0, time.process_time()

    def mark(final: bool = False) -> None:
        nonlocal spent, c0, next_ck
        spent += time.process_time() - c0
        if checkpoint is not None and (final or (next_ck is not None and spent >= next_ck)):
            model.eval()
            out.checkpoints.append({"cpu_seconds": spent, "sentences": float(out.sentences), **checkpoint(spent, out.sentences)})
            model.train()
            while next_ck is not None and next_ck <= spent:
                next_ck += checkpoint_every_s
        c0 = time.process_time()

    model.train()
    done = max_steps == 0  # epochs=0: the vocabulary and the initial weights only
    while not done:
        for batch in stream.batches(batch_size, rng):
            loss = loss_fn(batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            out.steps += 1
            out.sentences += len(batch)
            out.losses.append(float(loss.detach()))
            mark()
            if (max_steps is not None and out.steps >= max_steps) or (cpu_budget_s is not None and spent >= cpu_budget_s):
                done = True
                break
            if progress and out.steps % 20 == 0:
                log.info("step %d: loss %.4f, %.1f CPU s", out.steps, out.losses[-1], spent)
    out.cpu_seconds, out.wall_seconds = spent, time.perf_counter() - w0
    if checkpoint is not None and (not out.checkpoints or out.checkpoints[-1]["sentences"] != out.sentences):
        c0 = time.process_time()
        mark(final=True)
        out.cpu_seconds = out.checkpoints[-1]["cpu_seconds"]
    model.eval()
    return out
