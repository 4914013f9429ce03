"""rep_metrics: apply a representation-metric tool to activation sources whose relations are known.

Contract of ``evaluate(tool, ...)``: ``tool`` is a callable ``tool(sets, **options) -> dict`` taking ``{name:
ActivationSet}`` (the pairwise/multi-model form), or a registered tool name (``zoo list --tools``), which is applied
to each set on its own through ``zoo.analyze``. The sets (``sources``):

- ``trained_s{seed}``: a ``kind`` ("mlp" or "cnn") classifier trained ``steps`` steps on the digits training split
  with that seed (``sources.train``, cached);
- ``random_s{seed}``: the same architecture and seed, untrained (the control);
- ``pixels``: the probe images as (N, 64).

All on the same ``n`` probe images (the digits test split, ``probe_data``), labels attached. The metrics are the
tool's numbers flattened to ``key`` / ``key/sub`` (nested dicts one level deep; lists and strings are left out).

>>> from zoo_task_rep_metrics.similarity import linear_cka
>>> def cka_pair(sets, layer="out"):
...     return {"cka": linear_cka(sets["trained_s0"][layer], sets["trained_s1"][layer])}
>>> evaluate(cka_pair, seeds=(0, 1), sources=("trained",)).metrics["cka"] > 0.8   # doctest: +SKIP
True
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from zoo.task import Result

from . import sources as S

NAME = "rep_metrics"
SOURCES = ("trained", "random", "pixels")
BASELINES: dict[str, Any] = {}  # nothing to compare against: the sources are the controls


def probe_data(n: int | None = None, seed: int = 0, **_: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The digits probe set (the 450 test images of ``zoo_task_digits``' split, never trained on) and labels."""
    return S.probe_data(n=n, seed=seed)


def describe(**options: Any) -> dict[str, Any]:
    return {"task": NAME, "probe": "digits test split (450 images)", "kinds": list(S.KINDS),
            "default_steps": S.DEFAULT_STEPS, "batch": S.BATCH, "lr": S.LR, "weight_decay": S.WEIGHT_DECAY,
            "layers": {k: list(v) for k, v in S.LAYERS.items()}, "recipe_version": S.VERSION, "sources": list(SOURCES),
            **options}


def activation_sets(*, kind: str = "mlp", seeds: Sequence[int] = (0, 1), steps: int = S.DEFAULT_STEPS,
                    n: int | None = None, sources: Sequence[str] = SOURCES) -> dict[str, Any]:
    """``{name: ActivationSet}`` of the chosen sources (see the module docstring)."""
    bad = [s for s in sources if s not in SOURCES]
    if bad:
        raise ValueError(f"{NAME}: unknown sources {bad}; choose from {list(SOURCES)}")
    sets: dict[str, Any] = {}
    if "trained" in sources:
        sets.update({f"trained_s{s}": a for s, a in S.digits_models(seeds, kind, steps, n=n).items()})
    if "random" in sources:
        sets.update({f"random_s{s}": a for s, a in S.digits_models(seeds, kind, n=n, random_init=True).items()})
    if "pixels" in sources:
        sets["pixels"] = S.raw_pixels(n)
    return sets


def _flatten(result: dict[str, Any], prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in result.items():
        if isinstance(v, bool) or k == "artifacts":
            continue
        if isinstance(v, (int, float)):
            out[prefix + k] = float(v)
        elif isinstance(v, dict) and not prefix:
            out.update(_flatten(v, f"{k}/"))
    return out


def evaluate(tool: Callable[..., dict[str, Any]] | str, *, kind: str = "mlp", seeds: Sequence[int] = (0, 1),
             steps: int = S.DEFAULT_STEPS, n: int | None = None, sources: Sequence[str] = SOURCES,
             out_dir: str | None = None, **options: Any) -> Result:
    """Apply ``tool`` to the activation sources and return its numbers as a ``Result`` (see the module docstring)."""
    t0 = time.perf_counter()
    sets = activation_sets(kind=kind, seeds=seeds, steps=steps, n=n, sources=sources)
    metrics: dict[str, float] = {}
    artifacts: dict[str, str] = {}
    if isinstance(tool, str):
        import zoo

        for name, acts in sets.items():
            res = zoo.analyze(tool, acts, out_dir=None if out_dir is None else f"{out_dir}/{name}", **options)
            metrics.update({f"{name}/{k}": v for k, v in _flatten(res).items()})
            artifacts.update({f"{name}/{k}": p for k, p in (res.get("artifacts") or {}).items()})
    elif callable(tool):
        kw = dict(options)
        if out_dir is not None:
            kw["out_dir"] = out_dir
        res = tool(sets, **kw)
        if not isinstance(res, dict):
            raise TypeError(f"{NAME}: a tool returns a dict of plain data, got {type(res).__name__}")
        metrics = _flatten(res)
        artifacts = dict(res.get("artifacts") or {})
    else:
        raise TypeError(f"{NAME}: evaluate takes a tool (a callable on {{name: ActivationSet}} or a tool name), "
                        f"not {type(tool).__name__}")
    n_probe = next(iter(sets.values())).n
    return Result(task=NAME, metrics=metrics, n=n_probe, seconds=time.perf_counter() - t0,
                  config={"kind": kind, "seeds": [int(s) for s in seeds], "steps": int(steps), "n": n_probe,
                          "sources": list(sources), **{k: v for k, v in options.items() if isinstance(v, (int, float, str))}},
                  artifacts=artifacts)
