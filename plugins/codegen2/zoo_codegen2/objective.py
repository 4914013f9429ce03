"""CodeGen2's learning algorithm: causal LM on some sequences, file-level span corruption on the rest (one loss).

A span-corrupted sequence (the released model card's infill format, with ``n`` spans) is

    text_0 <mask_1> text_1 <mask_2> ... text_n <|endoftext|> <sep> <mask_1> span_1 <eom> ... <mask_n> span_n <eom>

built from one contiguous window of the corpus ("file-level": spans are cut inside the window, never across the
packed sequence), and trained with the same next-token cross-entropy over every position as a causal sequence.
Each training sequence is corrupted with probability ``p_span`` (the paper's mixture: causal LM and span corruption
in equal parts, ``P_SPAN = 0.5``), with ``n`` uniform in 1..``MAX_SPANS`` spans of Poisson(``MEAN_SPAN``) characters
(at least one). ``p_span=0`` is the causal-only control: its batches never contain a sentinel.

The optimiser and schedule are ``char_lm``'s (AdamW, betas and weight decay as there, linear warm-up then cosine to
``LR_FLOOR`` x lr), so the causal-only run is that task's training exactly.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import run_budget, to_model_device
from zoo_task_char_lm import task as char_lm

from .model import EOM, EOT, MAX_SPANS, SEP, CodeGen2, mask_id

P_SPAN = 0.5
MEAN_SPAN = 16.0  # characters; about 4 BPE tokens of code (the paper's spans are in tokens)
TRAIN = {"batch_size": 16, "lr": 1e-2, "weight_decay": 0.1, "warmup": 0.1}


def span_corrupt(window: np.ndarray, n_spans: int, rng: np.random.Generator, mean_span: float = MEAN_SPAN) -> np.ndarray:
    """The infill-format sequence of ``window`` (char ids) with ``n_spans`` spans moved behind ``<sep>``.

    Its length is ``len(window) + 3 * n_spans + 2``.

    >>> rng = np.random.default_rng(0)
    >>> seq = span_corrupt(np.arange(30) % 90 + 3, 2, rng)
    >>> len(seq), int((seq == mask_id(1)).sum()), int((seq == EOM).sum())
    (38, 2, 2)
    """
    n = len(window)
    lengths = np.maximum(1, rng.poisson(mean_span, n_spans))
    cap = max(n_spans, n // 2)  # at least half of the window stays as context
    while lengths.sum() > cap:
        lengths = np.maximum(1, lengths // 2)
    gaps_total = n - int(lengths.sum())
    cuts = np.sort(rng.integers(0, gaps_total + 1, n_spans))  # n_spans + 1 gaps summing to gaps_total
    gaps = np.diff(np.concatenate([[0], cuts, [gaps_total]]))
    context, tail, pos = [], [np.array([EOT, SEP])], 0
    for k in range(n_spans):
        context += [window[pos:pos + gaps[k]], np.array([mask_id(k + 1)])]
        pos += gaps[k]
        tail += [np.array([mask_id(k + 1)]), window[pos:pos + lengths[k]], np.array([EOM])]
        pos += lengths[k]
    context.append(window[pos:])
    return np.concatenate(context + tail).astype(np.int64)


def mixed_batch(train_ids: np.ndarray, batch_size: int, length: int, rng: np.random.Generator,
                p_span: float = P_SPAN) -> torch.Tensor:
    """``batch_size`` sequences of ``length`` ids: each causal text, or span-corrupted with probability ``p_span``."""
    rows = []
    for _ in range(batch_size):
        if rng.random() < p_span:
            n = int(rng.integers(1, MAX_SPANS + 1))
            raw = length - 3 * n - 2
            start = int(rng.integers(0, len(train_ids) - raw))
            rows.append(span_corrupt(train_ids[start:start + raw], n, rng))
        else:
            start = int(rng.integers(0, len(train_ids) - length))
            rows.append(train_ids[start:start + length])
    return torch.from_numpy(np.stack(rows))


def train(model: CodeGen2, *, steps: int | None, seed: int = 0, p_span: float = P_SPAN, budget_s: float | None = None,
          batch_size: int = TRAIN["batch_size"], lr: float = TRAIN["lr"], weight_decay: float = TRAIN["weight_decay"],
          warmup: float = TRAIN["warmup"], data: Any = None) -> dict[str, float]:
    """Train ``model`` in place on ``char_lm``'s training text with the mixed objective (``p_span=0``: causal only)."""
    ids = (data if data is not None else char_lm.load_corpus())[0].numpy()
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.optim_groups(weight_decay), lr=lr, betas=char_lm.BETAS, weight_decay=weight_decay)
    total = steps or 10_000
    n_warm = max(1, int(warmup * total))

    def factor(i: int) -> float:
        if i < n_warm:
            return (i + 1) / n_warm
        frac = min(1.0, (i - n_warm) / max(1, total - n_warm))
        return char_lm.LR_FLOOR + (1 - char_lm.LR_FLOOR) / 2 * (1 + math.cos(math.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    model.train()

    def step(_i: int) -> float:
        chunk = to_model_device(model, mixed_batch(ids, batch_size, model.block_size + 1, rng, p_span))
        logits = model(chunk[:, :-1], sentinels=True)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    out = run_budget(step, steps=steps, budget_s=budget_s)
    model.eval()
    return out
