"""``zoo reproduce scale-vector-norm``: scale-vector strategies in a small pre-norm char_lm GPT.

Five strategies of ``STRATEGIES`` in the same GPT (RMSNorm, SwiGLU, QK-norm), the same seeds,
batches, optimiser (the task's AdamW, weight decay 0.1 where a parameter is decayed) and steps:
no scale vectors, standard scales without decay on them (the common recipe), standard with decay
on the Input-Norm scales, standard with decay on the Output-Norm (QK-norm) scales, and the unified
strategy. ``passed`` when all three parts of the claim hold on the seed means (each part's verdict,
and whether the difference exceeds the seeds' spread, is in the summary).
"""
from __future__ import annotations

import logging
import time

import torch

import zoo
from zoo_task_char_lm import task as char_lm
from zoo.task import mean_std

log = logging.getLogger(__name__)

ROWS = ("none", "standard", "standard_wd_in", "standard_wd_out", "unified")
SIZE = {"dim": 96, "depth": 3, "heads": 4, "block_size": 64}
STEPS, BATCH, SEEDS = 300, 16, (0, 1)
QUICK_SIZE = {"dim": 32, "depth": 1, "heads": 2, "block_size": 32}
QUICK_STEPS, QUICK_BATCH, QUICK_SEEDS, QUICK_CHARS = 4, 4, (0,), 40_000


def run_one(strategy: str, seed: int, data: char_lm.Data, steps: int, batch: int, size: dict) -> dict[str, float]:
    """Train one seeded ``svn_gpt`` through ``zoo.evaluate``; validation bits/char and the figures."""
    torch.manual_seed(seed)
    model = zoo.create("svn_gpt", strategy=strategy, **size)
    res = zoo.evaluate(model, task=char_lm.NAME, steps=steps, seed=seed, baselines=[], data=data, batch_size=batch)
    return {"val_bpc": res.metrics["val_bpc"], "final_train_loss": res.metrics["final_train_loss"],
            "params": res.metrics["params"], "seconds_per_step": res.metrics["seconds_per_step"]}


def _verdict(label: str, holds: bool, a: tuple[float, float], b: tuple[float, float]) -> str:
    noise = max(a[1], b[1])
    if noise == 0.0:
        spread = "one seed, no spread"
    else:
        spread = f"the gap {'exceeds' if abs(a[0] - b[0]) > noise else 'is within'} the seed std {noise:.4f}"
    return f"{label}: {'holds' if holds else 'does not hold'} ({a[0]:.4f} vs {b[0]:.4f}; {spread})"


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Train every strategy over the seeds and check the three parts of the claim.

    Args:
        quick: a tiny model, a few steps, one seed (seconds; for tests): numbers mean nothing.
    """
    from .plugin import CLAIM

    t0 = time.perf_counter()
    size, steps, batch, seeds = (QUICK_SIZE, QUICK_STEPS, QUICK_BATCH, QUICK_SEEDS) if quick else (
        SIZE, STEPS, BATCH, SEEDS)
    data = char_lm.load_corpus(max_chars=QUICK_CHARS if quick else None)
    runs = {s: [run_one(s, seed, data, steps, batch, size) for seed in seeds] for s in ROWS}
    stats = {s: mean_std(r["val_bpc"] for r in runs[s]) for s in ROWS}
    table = {s: {"val_bpc_mean": stats[s][0], "val_bpc_std": stats[s][1],
                 "final_train_loss_mean": mean_std(r["final_train_loss"] for r in runs[s])[0],
                 "params": runs[s][0]["params"], "seconds_per_step": mean_std(r["seconds_per_step"] for r in runs[s])[0]}
             for s in ROWS}
    m = {s: stats[s][0] for s in ROWS}
    necessity = m["none"] > m["standard"]
    wd_in_helps, wd_out_hurts = m["standard_wd_in"] < m["standard"], m["standard_wd_out"] > m["standard"]
    best_baseline = min(("standard", "standard_wd_in", "standard_wd_out"), key=m.get)
    unified_wins = m["unified"] < m[best_baseline]
    passed = necessity and wd_in_helps and wd_out_hurts and unified_wins
    parts = [_verdict("removing scale vectors degrades (none > standard)", necessity, stats["none"], stats["standard"]),
             _verdict("WD helps Input-Norm scales (standard_wd_in < standard)", wd_in_helps, stats["standard_wd_in"],
                      stats["standard"]),
             _verdict("WD hurts Output-Norm scales (standard_wd_out > standard)", wd_out_hurts,
                      stats["standard_wd_out"], stats["standard"]),
             _verdict(f"unified beats the best baseline ({best_baseline})", unified_wins, stats["unified"],
                      stats[best_baseline])]
    summary = (f"Validation bits/char, mean over {len(seeds)} seed(s), {steps} steps. " + "; ".join(parts) + ".")
    if quick:
        summary = "QUICK RUN (tiny model, few steps; not a measurement of the claim). " + summary
    settings = {"quick": quick, "task": char_lm.NAME, "steps": steps, "batch_size": batch, "seeds": list(seeds), **size,
                "mlp_ratio": 4.0, "act": "swiglu", "qk_norm": True, "weight_decay": 0.1,
                "optimizer": "AdamW lr=3e-3 betas=(0.9, 0.95), warm-up + cosine (char_lm.train defaults)",
                "per_seed_val_bpc": {s: [r["val_bpc"] for r in runs[s]] for s in ROWS},
                "torch_threads": torch.get_num_threads(), **char_lm.corpus_info(QUICK_CHARS if quick else None)}
    return zoo.ClaimResult(plugin="scale-vector-norm", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
