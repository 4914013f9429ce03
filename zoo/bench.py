"""``zoo bench TASK``: every installed model of a task, and the task's baselines, under one protocol -> a leaderboard.

Each model is evaluated by ``zoo.evaluate`` (trained under the task's budget first, as ``zoo eval`` does) once per
seed, with the same ``steps`` / ``budget_s`` and task options for all; the baselines are the rows the task puts
next to each model (matched to its size where the task matches sizes), merged when they coincide. The result is
written to ``leaderboards/<task>.yaml`` in the format ``zoo.site`` reads (see its docstring): per row and metric the
mean, std, 95% t-interval and number of seeds, the parameters and the wall time, with the command, the protocol
and the versions.

Rebuilt incrementally: each row records a key (the sha256 of the protocol and of the model's distribution: name,
version and the bytes of its installed files), and a later ``zoo bench`` keeps a row whose key has not changed
instead of running it again (``force=True`` reruns everything). Under ``torchrun`` the models are spread over the
processes (rank r runs every world-th model, each evaluated in that process alone) and rank 0 writes the file.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from . import registry
from .errors import ModelNotFound, ZooError

log = logging.getLogger(__name__)

QUICK = {"steps": 20, "seeds": (0,)}
SEEDS = (0, 1, 2)
BASELINE_PREFIX = "baseline: "


def models_of(task: str) -> list[str]:
    """The installed models evaluated on ``task``, sorted."""
    registry.task(task)  # TaskNotFound, naming the installed tasks
    return sorted(name for name, (spec, _) in registry.catalog().models.items() if spec.task == task)


@cache  # one plugin can hold dozens of a task's models (activation-catalog: 51): its files are read once
def _dist_key(plugin_id: str) -> dict[str, str]:
    """The model's distribution, version and a digest of its installed files (code, data, shipped weights)."""
    from importlib import metadata

    status = registry.catalog().statuses[plugin_id]
    out = {"distribution": status.dist or plugin_id, "version": status.version or ""}
    try:
        dist = metadata.distribution(status.dist) if status.dist else None
    except metadata.PackageNotFoundError:
        dist = None
    h = hashlib.sha256()
    for f in sorted(dist.files or [], key=str) if dist is not None else ():
        if f.suffix in (".pyc",) or "__pycache__" in f.parts or f.name == "RECORD":
            continue
        try:
            h.update(str(f).encode() + b"\0" + Path(f.locate()).read_bytes())
        except OSError:
            continue
    out["files_sha256"] = h.hexdigest()
    return out


def _row_key(model: str, protocol: dict[str, Any]) -> str:
    _, plugin_id = registry.catalog().models[model]
    blob = json.dumps({"model": model, "protocol": protocol, "dist": _dist_key(plugin_id)}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _summary(values: Sequence[float]) -> dict[str, Any]:
    from .claims import interval95

    mean, std, lo, hi = interval95(list(values))
    out: dict[str, Any] = {"mean": mean, "std": std, "n": len(values)}
    if math.isfinite(lo):
        out["interval"] = [lo, hi]
    return out


def _numbers(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))}


def _aggregate(runs: list[dict[str, float]]) -> dict[str, Any]:
    names = sorted({k for r in runs for k in r})
    return {k: _summary([r[k] for r in runs if k in r]) for k in names}


def run_model(model: str, task: str, protocol: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list]]:
    """One model over the protocol's seeds: its row, and its baselines' per-seed metrics by name."""
    from .evaluation import evaluate

    runs, base_runs, t0 = [], {}, time.perf_counter()
    for seed in protocol["seeds"]:
        res = evaluate(model, task, steps=protocol.get("steps"), budget_s=protocol.get("budget_s"), seed=seed,
                       pretrained=False, device=protocol.get("device"), **protocol.get("options", {}))
        runs.append(_numbers(res.metrics))
        for name, m in res.baselines.items():
            base_runs.setdefault(name, []).append(_numbers(m))
    metrics = _aggregate(runs)
    row = {"model": model, "params": metrics.pop("params", {}).get("mean"), "seconds": time.perf_counter() - t0,
           "metrics": metrics}
    return row, base_runs


def _baseline_rows(per_model: dict[str, dict[str, list]]) -> list[dict[str, Any]]:
    """The baselines met next to each model, one row per (baseline, size): identical settings merge."""
    seen: dict[tuple, dict[str, Any]] = {}
    for model, bases in per_model.items():
        for name, runs in bases.items():
            metrics = _aggregate(runs)
            params = metrics.pop("params", {}).get("mean")
            key = (name, None if params is None else round(params))
            if key in seen:
                seen[key]["next_to"].append(model)
                continue
            label = BASELINE_PREFIX + name + ("" if params is None else f" ({int(round(params)):,} params)")
            seen[key] = {"model": label, "params": params, "seconds": None, "metrics": metrics, "baseline": True,
                         "next_to": [model]}
    return [seen[k] for k in sorted(seen, key=lambda k: (k[0], k[1] or 0))]


def _versions(models: Sequence[str]) -> dict[str, str]:
    import platform
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("zoo-core", "torch", "numpy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    for m in models:
        status = registry.catalog().statuses[registry.catalog().models[m][1]]
        if status.dist:
            out[status.dist] = status.version or ""
    return out


def leaderboard_path(task: str, folder: str | Path | None = None) -> Path:
    """``leaderboards/<task>.yaml`` next to registry.yaml in a checkout, else in the current folder."""
    if folder is None:
        folder = Path("leaderboards")
    return Path(folder) / f"{task}.yaml"


def bench(task: str, *, models: Sequence[str] | None = None, quick: bool = False, seeds: Sequence[int] | None = None,
          steps: int | None = None, budget_s: float | None = None, options: dict[str, Any] | None = None,
          out_dir: str | Path | None = None, force: bool = False, command: str | None = None,
          device: str | None = None) -> dict[str, Any]:
    """Run the leaderboard of ``task`` and write it; return its data (on every rank under torchrun). ``device``
    (``"cuda"``: under torchrun each rank's own GPU) is part of the protocol, so a row run elsewhere is rerun."""
    import yaml

    from .task import distributed, solo

    installed = models_of(task)
    if models:
        unknown = [m for m in models if m not in installed]
        if unknown:
            raise ModelNotFound(f"not models of task {task}: {', '.join(unknown)}; its installed models: "
                                f"{', '.join(installed) or 'none'}")
        chosen = list(dict.fromkeys(models))
    else:
        chosen = installed
    if not chosen:
        raise ZooError(f"task {task} has no installed models: install a plugin evaluated on it (`zoo list`)")
    protocol = {"seeds": list(seeds if seeds is not None else QUICK["seeds"] if quick else SEEDS),
                "steps": steps if steps is not None else (QUICK["steps"] if quick else None),
                "budget_s": budget_s, "options": dict(options or {}), "quick": quick}
    if device is not None and device != "cpu":  # CPU rows keep the keys they had before devices were an option
        from .task import resolve_device

        resolve_device(device)  # fail before any model runs
        protocol["device"] = str(device)
    path = leaderboard_path(task, out_dir)
    old = yaml.safe_load(path.read_text()) if path.is_file() else None
    kept = {r["model"]: r for r in (old or {}).get("rows", []) if not r.get("baseline")}
    kept_bases = (old or {}).get("baseline_runs", {})
    rank, world = distributed()
    keys = {m: _row_key(m, protocol) for m in chosen}
    todo = [m for m in chosen if force or kept.get(m, {}).get("key") != keys[m]]
    mine: dict[str, tuple] = {}
    for i, m in enumerate(todo):
        if i % world != rank:
            continue
        log.info("bench %s: %s (%d of %d)", task, m, i + 1, len(todo))
        with solo():  # this rank evaluates the model alone: the task must not shard it over the other ranks
            row, bases = run_model(m, task, protocol)
        row["key"] = keys[m]
        mine[m] = (row, bases)
    if world > 1:
        import torch.distributed as dist

        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, mine)
        for part in gathered:
            mine.update(part)
    rows = [mine[m][0] if m in mine else kept[m] for m in chosen]
    base_runs = {m: (mine[m][1] if m in mine else kept_bases.get(m, {})) for m in chosen}
    data = {"task": task, "protocol": protocol, "command": command or f"zoo bench {task}",
            "versions": _versions(chosen), "date": time.strftime("%Y-%m-%d"),
            "rows": rows + _baseline_rows(base_runs), "baseline_runs": base_runs,
            "rerun": [m for m in chosen if m in mine], "kept": [m for m in chosen if m not in mine]}
    if rank == 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
        tmp.replace(path)  # a reader never sees half a leaderboard
    return data
