"""The task interface: ``Result`` of an evaluation, ``ClaimResult`` of a reproduction, and the
budget loop every task trains under."""
from __future__ import annotations

import datetime as _dt
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable


@dataclass
class Result:
    """What ``zoo.evaluate`` returns: the model's metrics and each baseline's, on the same data."""

    task: str
    metrics: dict[str, float]
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)
    n: int = 0  # evaluation examples
    seconds: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)  # name -> path of a written file (PNG, ...)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def table(self, model_name: str = "model") -> str:
        rows = {model_name: self.metrics, **self.baselines}
        return format_table(rows)


@dataclass
class ClaimResult:
    """What a plugin's ``reproduce()`` returns: the claim, the measured table, pass or fail."""

    plugin: str
    claim: str
    passed: bool
    table: dict[str, dict[str, float]]
    summary: str
    settings: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        verdict = "REPRODUCED" if self.passed else "NOT REPRODUCED"
        return f"{self.plugin}: {self.claim}\n\n{format_table(self.table)}\n\n{verdict}: {self.summary}"


def format_table(rows: dict[str, dict[str, Any]]) -> str:
    """A plain-text table: one row per entry, one column per metric seen in any row."""
    cols: list[str] = []
    for metrics in rows.values():
        cols += [c for c in metrics if c not in cols]
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "" if v is None else str(v)
    header = ["name"] + cols
    body = [[name] + [fmt(m.get(c)) for c in cols] for name, m in rows.items()]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    line = lambda r: "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in body])


def run_budget(step: Callable[[int], float], *, steps: int | None, budget_s: float | None,
               progress: str | None = None) -> dict[str, float]:
    """Call ``step(i)`` until ``steps`` are done or ``budget_s`` seconds pass; return loss and timing.

    At least one of ``steps``/``budget_s`` must be given; with both, whichever ends first wins.
    """
    if steps is None and budget_s is None:
        raise ValueError("give steps= or budget_s= (or both)")
    from tqdm.auto import tqdm

    bar = tqdm(total=steps, desc=progress, leave=False, disable=progress is None, mininterval=0.5)
    t0 = time.perf_counter()
    i, loss = 0, float("nan")
    losses: list[float] = []
    while (steps is None or i < steps) and (budget_s is None or time.perf_counter() - t0 < budget_s):
        loss = float(step(i))
        losses.append(loss)
        i += 1
        bar.update(1)
    bar.close()
    seconds = time.perf_counter() - t0
    tail = losses[-max(1, len(losses) // 10):] if losses else [float("nan")]
    return {"steps": i, "train_seconds": seconds, "seconds_per_step": seconds / max(i, 1),
            "final_train_loss": sum(tail) / len(tail)}


def mean_std(values: Iterable[float]) -> tuple[float, float]:
    vals = list(values)
    m = sum(vals) / len(vals)
    var = sum((v - m) ** 2 for v in vals) / max(len(vals) - 1, 1)
    return m, var ** 0.5


def distributed() -> tuple[int, int]:
    """``(rank, world_size)``; under ``torchrun`` this joins the process group (gloo on CPU).

    Tasks shard their evaluation set with ``shard`` and add up counts with ``all_reduce_sum``, so
    a sharded evaluation gives the single-process result.
    """
    import os

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1
    import torch
    import torch.distributed as dist

    if not dist.is_initialized():
        if torch.cuda.is_available():
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
        import atexit

        atexit.register(_leave_process_group)
    return dist.get_rank(), dist.get_world_size()


def _leave_process_group() -> None:
    """At exit: wait for every rank, then destroy the group. A rank that exits while a peer still holds
    the gloo connection makes that peer's destructor abort (SIGABRT, seen about 1 run in 10 here)."""
    import torch.distributed as dist

    if dist.is_initialized():
        try:
            dist.barrier()
        finally:
            dist.destroy_process_group()


def shard(n: int, rank: int, world: int) -> slice:
    """This rank's contiguous part of ``range(n)`` (the parts cover it exactly once)."""
    return slice(n * rank // world, n * (rank + 1) // world)


def all_reduce_sum(values: list[float]) -> list[float]:
    """Sum ``values`` over all ranks (identity in a single process)."""
    rank, world = distributed()
    if world == 1:
        return list(values)
    import torch
    import torch.distributed as dist

    t = torch.tensor(values, dtype=torch.float64)
    if dist.get_backend() == "nccl":  # NCCL reduces GPU tensors only
        t = t.cuda(torch.cuda.current_device())
    dist.all_reduce(t)
    return t.cpu().tolist()


class torch_threads:
    """``with torch_threads(1): ...`` runs the block with ``n`` torch threads, then restores the count.

    Tiny models on a small, shared machine run much faster on one thread (measured here under load:
    a SIREN step 0.84 s with 2 threads, 0.044 s with 1).
    """

    def __init__(self, n: int = 1):
        self.n = n

    def __enter__(self) -> "torch_threads":
        import torch

        self.before = torch.get_num_threads()
        torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.set_num_threads(self.before)
