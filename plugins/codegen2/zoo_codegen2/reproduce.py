"""``zoo reproduce codegen2``: the unified objective against the same decoder trained causal-only.

Both rows build ``codegen2`` at ``CLAIM_SIZE`` (identical parameters), train it on ``char_lm``'s stdlib source for
the same steps, batches of the same shape, optimiser and schedule (``objective.train``; ``p_span`` is the only
difference), and are scored on ``code_text``'s lm protocol: validation bits/char on the whole ``char_lm`` split, and
exact match on the task's 100 held-out lines (``data.infill_examples``, the task's ``N_INFILL``). The mixed model
fills each line in the sentinel format (``model.infill_many``, the same greedy pass as ``model.infill``); the causal
model writes from the prefix until the newline exactly as the task's ``left_to_right_infill`` does (batched here,
``left_to_right_many``). Reported only: the mixed model's own left-to-right exact match, and the bits/char of the true
middle (``middle_bpc``) given the infill prompt (mixed) or the prefix (causal).
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch.nn import functional as F

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_char_lm import task as char_lm
from zoo_task_code_text import data as D
from zoo_task_code_text.task import N_INFILL

from . import objective
from .model import N_CHARS, CodeGen2
from .plugin import CLAIM

CLAIM_SIZE = {"dim": 64, "depth": 2, "heads": 4, "rotary_dim": 8, "block_size": 128}
STEPS, QUICK_STEPS = 800, 40
BPC_MARGIN, INFILL_MARGIN = -0.10, 0.03


@torch.no_grad()
def left_to_right_many(model: torch.nn.Module, examples: list[D.Infill]) -> list[str]:
    """The task's ``left_to_right_infill`` for every example at once: greedy characters from the prefix (the last
    ``block_size`` characters seen at each step) until a newline, at most ``len(middle) + 16`` of them."""
    block = model.block_size
    limits = [len(e.middle) + 16 for e in examples]
    out: list[list[str] | None] = [[] for _ in examples]
    groups: dict[int, list[int]] = {}
    for i, e in enumerate(examples):
        groups.setdefault(len(e.prefix), []).append(i)
    for rows in groups.values():
        ids = torch.stack([char_lm.encode(examples[i].prefix) for i in rows])
        done = [False] * len(rows)
        for step in range(max(limits[i] for i in rows)):
            nxt = model(ids[:, -block:])[:, -1].argmax(-1)
            for j, i in enumerate(rows):
                ch = char_lm.VOCAB[int(nxt[j])]
                if done[j] or step >= limits[i] or ch == "\n":
                    done[j] = True
                else:
                    out[i].append(ch)
            if all(done):
                break
            ids = torch.cat([ids, nxt[:, None]], 1)
    return ["".join(o) for o in out]


def exact(fills: list[str], examples: list[D.Infill]) -> float:
    """The task's infill exact match: the stripped fill equals the line."""
    return sum(f.strip() == e.middle for f, e in zip(fills, examples, strict=True)) / len(examples)


@torch.no_grad()
def middle_bpc(model: CodeGen2, examples: list[D.Infill], *, infill: bool) -> float:
    """Bits per character of the true middles: after the infill prompt (``infill``) or after the prefix."""
    bits, n = 0.0, 0
    for e in examples:
        mid = char_lm.encode(e.middle)
        if infill:
            ctx = model.infill_prompt(e.prefix, e.suffix)
            logits = model(torch.cat([ctx, mid])[None], sentinels=True)[0]
        else:
            ctx = char_lm.encode(e.prefix[-(model.block_size - len(mid)):])
            logits = model(torch.cat([ctx, mid])[None])[0, :, :N_CHARS]
        pred = logits[len(ctx) - 1: len(ctx) - 1 + len(mid)]
        bits += F.cross_entropy(pred, mid, reduction="sum").item() / math.log(2)
        n += len(mid)
    return bits / n


def claim_row(*, seed: int, quick: bool, steps: int, p_span: float) -> dict[str, float]:
    """``codegen2`` at ``CLAIM_SIZE`` trained with ``p_span`` (0: causal only) and scored as the module says."""
    torch.manual_seed(seed)
    model = zoo.create("codegen2", **CLAIM_SIZE)
    fig = objective.train(model, steps=steps, seed=seed, p_span=p_span)
    examples = D.infill_examples(N_INFILL, seed=0)
    l2r = exact(left_to_right_many(model, examples), examples)
    out = {"val_bpc": char_lm.val_loss(model), "params": float(sum(p.numel() for p in model.parameters())),
           "train_seconds": fig["train_seconds"], "final_train_loss": fig["final_train_loss"]}
    if p_span > 0:
        fills = model.infill_many([e.prefix for e in examples], [e.suffix for e in examples],
                                  [len(e.middle) + 16 for e in examples])
        out.update(infill_exact=exact(fills, examples), left_to_right_exact=l2r,
                   middle_bpc=middle_bpc(model, examples, infill=True))
    else:
        out.update(infill_exact=l2r, left_to_right_exact=l2r, middle_bpc=middle_bpc(model, examples, infill=False))
    return out


SETTINGS: dict[str, Any] = {"size": CLAIM_SIZE, "steps": STEPS, "p_span": objective.P_SPAN,
                            "mean_span": objective.MEAN_SPAN, "max_spans": 3, "train": objective.TRAIN,
                            "n_infill": N_INFILL}

REPRODUCTION = Claim(
    plugin="codegen2", claim=CLAIM, task="code_text", seeds=(0, 1, 2), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("codegen2_mixed", claim_row, {"p_span": objective.P_SPAN}),
          Row("codegen2_causal", claim_row, {"p_span": 0.0})],
    checks=[Check("codegen2_mixed", "val_bpc", baseline="codegen2_causal", margin=BPC_MARGIN, higher=False),
            Check("codegen2_mixed", "infill_exact", baseline="codegen2_causal", margin=INFILL_MARGIN)],
    settings=SETTINGS,
    task_options={"mode": "lm"},
    notes=f"margins fixed before the first run: val bits/char causal - mixed >= {BPC_MARGIN} (non-inferiority: the "
          f"paper's lesson is that the mixture keeps left-to-right quality while half the sequences train infill; "
          f"0.10 bits/char is 2.5x char_lm's measured three-seed spread of 0.04 and about 4% of the loss at this "
          f"budget); infill exact match mixed (sentinel format) - causal (left to right, the task's protocol) >= "
          f"{INFILL_MARGIN} (3 of the task's 100 lines, paired by seed on the same lines: a smaller gain is within "
          "one line's noise per seed). Both rows: identical decoder and parameters, steps, batch shape, optimiser and "
          "schedule; only p_span differs. middle_bpc and the mixed model's own left-to-right exact match reported "
          "only. The task's gpt baseline (a sequential-block GPT) is not a row: the paper's comparison is the "
          "objective, so the control keeps the CodeGen architecture.",
)
