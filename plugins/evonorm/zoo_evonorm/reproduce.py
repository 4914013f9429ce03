"""``zoo reproduce evonorm``: BN-ReLU vs GN-ReLU vs EvoNorm-B0 vs EvoNorm-S0 at batch 128 and batch 4.

The four layers sit in the same tiny pre-activation ResNet; for a given seed every row starts
from the same convolution and head weights (no norm-activation layer draws random numbers) and
sees the same batches. Training is the task's own loop (``zoo.evaluate`` on ``digits_classify``:
AdamW lr 2e-3, wd 0.05, one-cycle schedule) with a fixed number of steps per batch size. The
task's CNN baseline (``cnn-ln-relu``, LayerNorm applied per position, so batch-size-free) is
trained beside them under the same settings.
"""
from __future__ import annotations

import logging
import time

import torch

import zoo
from zoo_task_digits import task
from zoo.task import mean_std, torch_threads

log = logging.getLogger(__name__)

TASK = task.NAME
ROWS = (("BN-ReLU", "tinyresnet_bn_relu"), ("GN-ReLU", "tinyresnet_gn_relu"),
        ("EvoNorm-B0", "tinyresnet_evonorm_b0"), ("EvoNorm-S0", "tinyresnet_evonorm_s0"),
        ("task baseline", "cnn-ln-relu"))
# (batch size, steps): ~14 epochs at batch 128; 600 steps at batch 4 (~1.8 epochs, the small-batch regime).
SETTINGS = ((128, 150), (4, 600))
SEEDS = (0, 1, 2)
QUICK_SETTINGS, QUICK_SEEDS = ((8, 2), (4, 2)), (0,)
THREADS = 1


def build(name: str, seed: int) -> torch.nn.Module:
    """The seeded, untrained model of one row (a registered model or the task's baseline)."""
    if name in task.BASELINES:
        return task.build_baseline(name, seed=seed)
    torch.manual_seed(seed)
    return zoo.create(name)


def run_one(name: str, seed: int, batch_size: int, steps: int) -> dict[str, float]:
    """Train one row with ``zoo.evaluate`` and return test accuracy, train loss, time per step, params."""
    result = zoo.evaluate(build(name, seed), task=TASK, steps=steps, seed=seed, baselines=[], batch_size=batch_size)
    m = result.metrics
    return {"test_acc": m["accuracy"], "final_train_loss": m["final_train_loss"],
            "seconds_per_step": m["seconds_per_step"], "params": m["params"]}


def _row(runs: list[dict[str, float]]) -> dict[str, float]:
    acc = mean_std(r["test_acc"] for r in runs)
    return {"test_acc_mean": acc[0], "test_acc_std": acc[1],
            "final_train_loss": mean_std(r["final_train_loss"] for r in runs)[0],
            "ms_per_step": 1e3 * mean_std(r["seconds_per_step"] for r in runs)[0],
            "params": runs[0]["params"]}


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Run the comparison and return the measured table with pass/fail.

    ``passed`` is True when EvoNorm-S0's mean test accuracy is >= BN-ReLU's at both batch sizes
    and > GN-ReLU's at batch 4. Rows are interleaved per seed, so time per step is measured
    under the same machine load for every layer.

    Args:
        quick: one seed and a few steps (seconds; for tests). The numbers then mean nothing.
    """
    from .plugin import CLAIM

    settings, seeds = (QUICK_SETTINGS, QUICK_SEEDS) if quick else (SETTINGS, SEEDS)
    t0, c0 = time.perf_counter(), time.process_time()
    runs: dict[tuple[str, int], list[dict[str, float]]] = {}
    with torch_threads(THREADS):
        for seed in seeds:
            for batch_size, steps in settings:
                for label, name in ROWS:
                    r = run_one(name, seed, batch_size, steps)
                    runs.setdefault((label, batch_size), []).append(r)
                    log.info("evonorm reproduce: %s batch %d seed %d: %s", label, batch_size, seed, r)

    table = {f"{label} ({name}) @ batch {b}": _row(runs[(label, b)])
             for b, _ in settings for label, name in ROWS}
    acc = {(label, b): mean_std(r["test_acc"] for r in runs[(label, b)]) for (label, b) in runs}
    big, small = settings[0][0], settings[1][0]
    s0 = lambda b: acc[("EvoNorm-S0", b)][0]  # noqa: E731
    checks = {f"S0 >= BN-ReLU @ batch {big}": s0(big) >= acc[("BN-ReLU", big)][0],
              f"S0 >= BN-ReLU @ batch {small}": s0(small) >= acc[("BN-ReLU", small)][0],
              f"S0 > GN-ReLU @ batch {small}": s0(small) > acc[("GN-ReLU", small)][0]}
    passed = all(checks.values())

    def diff(a: str, b: str, bs: int) -> str:
        (ma, sa), (mb, sb) = acc[(a, bs)], acc[(b, bs)]
        return f"{a} - {b} @ {bs}: {ma - mb:+.4f} (seed std {max(sa, sb):.4f})"

    comparisons = [diff("EvoNorm-S0", "BN-ReLU", big), diff("EvoNorm-S0", "BN-ReLU", small),
                   diff("EvoNorm-S0", "GN-ReLU", small), diff("EvoNorm-B0", "BN-ReLU", big),
                   diff("EvoNorm-B0", "BN-ReLU", small), diff("EvoNorm-S0", "GN-ReLU", big)]
    held = [k for k, v in checks.items() if v]
    failed = [k for k, v in checks.items() if not v]
    summary = (f"holds: {', '.join(held) or 'none'}; fails: {', '.join(failed) or 'none'} "
               f"({len(seeds)} seed(s); steps {dict(settings)} per batch size). " + "; ".join(comparisons) + ".")
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    summary += f" Wall {seconds:.0f} s, process CPU {cpu:.0f} s, {THREADS} torch thread."
    if quick:
        summary = "QUICK RUN (1 seed, a few steps; not a measurement of the claim). " + summary
    return zoo.ClaimResult(
        plugin="evonorm", claim=CLAIM, passed=passed, table=table, summary=summary, seconds=seconds,
        settings={"quick": quick, "task": TASK, "seeds": list(seeds),
                  "steps_per_batch_size": {str(b): s for b, s in settings},
                  "optimizer": "AdamW lr=2e-3 wd=0.05, one-cycle (zoo_task_digits.task.train defaults)",
                  "backbone": "tiny pre-activation ResNet, 16x16 input, widths 8/16/32, 4 groups for GN and S0",
                  "checks": checks, "process_time_s": cpu, "torch_threads": THREADS,
                  "per_seed_test_acc": {f"{label} @ {b}": [r["test_acc"] for r in runs[(label, b)]]
                                        for (label, b) in runs}})
