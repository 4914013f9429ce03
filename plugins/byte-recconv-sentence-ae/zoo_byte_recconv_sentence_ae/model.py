"""Byte-level recursive convolutional sentence autoencoder (Malik, Lancucki & Chorowski 2018, arXiv 1808.01160).

The architecture is the recursive convolutional autoencoder of Zhang & LeCun (arXiv 1802.01817) made light:

- **encoder**: bytes (B, L = 2^k) -> a byte embedding (256 x C) -> ONE down block, ``relu(conv_stride2(res(x)))``,
  applied again and again, each time halving the length, until ``code_len`` positions are left -> the
  (C, code_len) map flattened is the sentence vector, D = C * code_len;
- **decoder**: the mirror: the vector unflattened -> ONE up block, ``res(relu(conv_transpose_stride2(x)))``,
  applied until the length is L again -> a 1x1 convolution to 256 byte logits.

The down and up blocks are the recursion: their weights are shared by every level, so the parameter count does not
depend on L, and a model trained on 64-byte sentences runs on 128-byte ones with one more level. The loss is the
cross-entropy of every byte of the padded sequence (padding included, as in the base model); the reported byte
accuracy counts the sentence's own bytes only. ``shared=False`` is the comparison model, one down and one up block
per level (the "separate weights per level" form of the same network).

What differs from the paper, and what is not from its text: only the abstract of 1808.01160 was read here (the
body could not be retrieved), so the "lightweight" modifications are this plugin's reading of its claim (fewer
parameters, less time): learned stride-2 convolutions for the base model's max-pooling and upsampling, one
residual convolution per level where the base model stacks several, no prefix/postfix groups and no linear layers
around the code (the code is the final feature map itself), and no normalisation layers. The CPU default (C=64,
L=64 bytes, code_len 8, D=512: three levels; a 4-position code learnt far slower in a 600-step trial) is far
smaller than the base model (256 features, paragraphs of 1,024 bytes: ``preset="paper"`` gives those widths, not
the paper's own settings, which were not read). Texts are UTF-8 bytes cut to L and padded with byte 0.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_embedding_quality.data import split_sentences

log = logging.getLogger(__name__)

CPU = {"channels": 64, "length": 64, "code_len": 8, "kernel": 3}
PAPER = {"channels": 256, "length": 1024, "code_len": 8, "kernel": 3}  # Zhang & LeCun's base width and length
PRESETS = ("cpu", "paper")
TRAIN = {"steps": 600, "batch_size": 32, "lr": 3e-3}
HELD_OUT_EVERY = 10  # every 10th sentence of a fitted corpus is held out to score reconstruction


class Residual(nn.Module):
    """``x + conv(relu(x))``, length-preserving (kernel ``kernel``, ``channels`` features)."""

    def __init__(self, channels: int, kernel: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, padding=kernel // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(F.relu(x))


class Down(nn.Module):
    """One level of the encoder: a residual convolution, then a stride-2 convolution that halves the length."""

    def __init__(self, channels: int, kernel: int = 3) -> None:
        super().__init__()
        self.res = Residual(channels, kernel)
        self.pool = nn.Conv1d(channels, channels, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.pool(self.res(x)))


class Up(nn.Module):
    """One level of the decoder: a stride-2 transposed convolution that doubles the length, then a residual one."""

    def __init__(self, channels: int, kernel: int = 3) -> None:
        super().__init__()
        self.unpool = nn.ConvTranspose1d(channels, channels, 2, stride=2)
        self.res = Residual(channels, kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.res(F.relu(self.unpool(x)))


def to_bytes(texts: Sequence[str], length: int) -> torch.Tensor:
    """``(N, length)`` long: each text's UTF-8 bytes, cut to ``length`` and padded with byte 0.

    >>> to_bytes(["hi", "hello"], 4).tolist()
    [[104, 105, 0, 0], [104, 101, 108, 108]]
    """
    out = torch.zeros(len(texts), length, dtype=torch.long)
    for i, t in enumerate(texts):
        b = t.encode("utf-8")[:length]
        out[i, :len(b)] = torch.tensor(list(b), dtype=torch.long)
    return out


def levels(length: int, code_len: int) -> int:
    """How many halvings take ``length`` to ``code_len`` (both powers of two, ``length >= code_len``)."""
    n = math.log2(length / code_len) if length >= code_len else -1
    if n < 0 or n != int(n) or code_len & (code_len - 1) or code_len < 1:
        raise ValueError(f"length {length} must be code_len {code_len} times a power of two (L = 2^k, code_len = 2^j)")
    return int(n)


class RecConvAE(nn.Module):
    """The autoencoder: ``encode(bytes (B, L)) -> (B, D)``, ``decode((B, D), L) -> (B, L, 256)`` logits.

    ``embed(texts)`` gives one row per text: its sentences (the task's ``split_sentences``) each encoded from their
    first ``length`` bytes, averaged. ``forward`` on texts is ``embed``; on a LongTensor of bytes, ``encode``.

    >>> m = RecConvAE(channels=8, length=16, code_len=2)
    >>> z = m.encode(to_bytes(["abc"], 16)); z.shape, m.decode(z).shape
    (torch.Size([1, 16]), torch.Size([1, 16, 256]))
    """

    embedding_mode = "sentence"

    def __init__(self, channels: int = 64, length: int = 64, code_len: int = 8, kernel: int = 3, shared: bool = True) -> None:
        super().__init__()
        self.channels, self.length, self.code_len, self.kernel, self.shared = channels, length, code_len, kernel, shared
        self.dim = channels * code_len
        n = levels(length, code_len)
        self.embedding = nn.Embedding(256, channels)
        self.out = nn.Conv1d(channels, 256, 1)
        if shared:  # the recursion: one block, applied at every level
            self.down, self.up = Down(channels, kernel), Up(channels, kernel)
        else:  # the comparison model: one block per level (fixes the number of levels, so L)
            self.down_levels = nn.ModuleList(Down(channels, kernel) for _ in range(n))
            self.up_levels = nn.ModuleList(Up(channels, kernel) for _ in range(n))

    def _down(self, i: int) -> nn.Module:
        return self.down if self.shared else self.down_levels[i]

    def _up(self, i: int) -> nn.Module:
        return self.up if self.shared else self.up_levels[i]

    def _levels(self, length: int) -> int:
        n = levels(length, self.code_len)
        if not self.shared and n != len(self.down_levels):
            raise ValueError(f"this unshared model has {len(self.down_levels)} levels (length {self.length}); got "
                             f"length {length}; only the shared (recursive) model runs on other lengths")
        return n

    def encode(self, data: torch.Tensor) -> torch.Tensor:
        """Bytes ``(B, L)``, L = code_len * 2^n -> sentence vectors ``(B, channels * code_len)``."""
        x = self.embedding(data).transpose(1, 2)
        for i in range(self._levels(data.shape[1])):
            x = self._down(i)(x)
        return x.flatten(1)

    def decode(self, z: torch.Tensor, length: int | None = None) -> torch.Tensor:
        """Sentence vectors ``(B, D)`` -> byte logits ``(B, length, 256)`` (``length`` defaults to the model's)."""
        n = self._levels(length or self.length)
        x = z.view(len(z), self.channels, self.code_len)
        for i in reversed(range(n)):  # level i of the decoder mirrors level i of the encoder
            x = self._up(i)(x)
        return self.out(x).transpose(1, 2)

    @staticmethod
    def to_text(logits: torch.Tensor) -> list[str]:
        """The most likely bytes of ``(B, L, 256)`` logits as text, cut at the first byte 0 (the padding)."""
        return [bytes(row).split(b"\0", 1)[0].decode("utf-8", errors="replace") for row in logits.argmax(-1).tolist()]

    def forward(self, x: list[str] | torch.Tensor) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return self.encode(x)
        return self.embed(x)

    @torch.no_grad()
    def embed(self, texts: Sequence[str], batch_size: int = 512) -> torch.Tensor:
        """(N, D) float32: per text the mean of its sentences' vectors (each sentence's first ``length`` bytes)."""
        pieces, owner = [], []
        for n, t in enumerate(texts):
            sents = split_sentences(t) or [t]
            pieces += sents
            owner += [n] * len(sents)
        was = self.training
        self.eval()
        z = torch.cat([self.encode(to_bytes(pieces[i:i + batch_size], self.length))
                       for i in range(0, len(pieces), batch_size)]) if pieces else torch.zeros(0, self.dim)
        self.train(was)
        out = torch.zeros(len(texts), self.dim).index_add_(0, torch.tensor(owner, dtype=torch.long), z)
        return out / torch.bincount(torch.tensor(owner), minlength=len(texts)).clamp(min=1)[:, None]

    @torch.no_grad()
    def reconstruction(self, texts: Sequence[str], batch_size: int = 512) -> dict[str, float]:
        """Byte accuracy of ``decode(encode(x))`` over the texts' own bytes (first ``length``), and the fraction of
        texts rebuilt exactly."""
        was = self.training
        self.eval()
        hit = total = exact = 0
        for i in range(0, len(texts), batch_size):
            x = to_bytes(texts[i:i + batch_size], self.length)
            n = torch.tensor([min(len(t.encode("utf-8")), self.length) for t in texts[i:i + batch_size]])
            mask = torch.arange(self.length)[None] < n[:, None]
            ok = (self.decode(self.encode(x)).argmax(-1) == x) & mask
            hit += int(ok.sum())
            total += int(mask.sum())
            exact += int((ok.sum(1) == mask.sum(1)).sum())
        self.train(was)
        return {"byte_acc": hit / max(total, 1), "exact": exact / max(len(texts), 1)}

    def fit(self, corpus: Any, *, steps: int | None = None, seed: int = 0, progress: Any = None,
            batch_size: int = TRAIN["batch_size"], lr: float = TRAIN["lr"], budget_s: float | None = None) -> dict[str, float]:
        """Autoencode the sentences of ``corpus`` (a ``TextCorpus``'s ``texts``, or a list of strings) with Adam.

        Every ``HELD_OUT_EVERY``-th sentence is held out; the figures include its reconstruction (``byte_acc``,
        ``exact``), the training seconds and the final training loss (mean of the last tenth of the steps).
        """
        texts = list(corpus.texts if hasattr(corpus, "texts") else corpus)
        held = texts[HELD_OUT_EVERY - 1::HELD_OUT_EVERY]
        train = [t for i, t in enumerate(texts) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1] or texts
        data = to_bytes(train, self.length)
        steps = TRAIN["steps"] if steps is None else steps
        g = torch.Generator().manual_seed(seed)
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.5 * (1 + math.cos(math.pi * min(i / steps, 1.0))))
        self.train()
        losses, t0 = [], time.perf_counter()
        for _ in range(steps):
            x = data[torch.randint(len(data), (batch_size,), generator=g)]
            loss = F.cross_entropy(self.decode(self.encode(x)).reshape(-1, 256), x.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
            if budget_s is not None and time.perf_counter() - t0 > budget_s:
                break
        seconds = time.perf_counter() - t0
        self.eval()
        tail = losses[-max(1, len(losses) // 10):]
        figs = {"train_seconds": seconds, "steps": float(len(losses)), "final_train_loss": float(np.mean(tail)),
                "train_sentences": float(len(train)), **{f"heldout_{k}": v for k, v in self.reconstruction(held).items()}}
        log.info("byte-recconv (%s): %d steps, %.1f s, held-out byte accuracy %.3f", "shared" if self.shared else
                 "unshared", len(losses), seconds, figs["heldout_byte_acc"])
        return figs


def _build(preset: str, shared: bool, given: dict[str, Any]) -> RecConvAE:
    if preset not in PRESETS:
        raise ValueError(f"byte-recconv preset must be one of {PRESETS}, got {preset!r}")
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in given.items() if v is not None}}
    return RecConvAE(shared=shared, **args)


def byte_recconv_ae(preset: str = "cpu", channels: int | None = None, length: int | None = None,
                    code_len: int | None = None, kernel: int | None = None) -> RecConvAE:
    """The recursive autoencoder (one shared down block and one shared up block). ``preset="cpu"``: C=64, L=64
    bytes, code_len 8 (D=512); ``preset="paper"``: the base model's C=256, L=1024. Arguments given override it.

    >>> byte_recconv_ae().dim, byte_recconv_ae(preset="paper").channels
    (512, 256)
    """
    return _build(preset, True, {"channels": channels, "length": length, "code_len": code_len, "kernel": kernel})


def byte_conv_ae_unshared(preset: str = "cpu", channels: int | None = None, length: int | None = None,
                          code_len: int | None = None, kernel: int | None = None) -> RecConvAE:
    """The comparison model: the same network with separate down/up weights at every level."""
    return _build(preset, False, {"channels": channels, "length": length, "code_len": code_len, "kernel": kernel})
