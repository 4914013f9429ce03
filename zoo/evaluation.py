"""``zoo.evaluate``: run a model (or a name) on its standard task."""
from __future__ import annotations

import inspect
import logging
from typing import Any

from . import registry
from .errors import TaskNotFound, UnknownArgument, ZooError

log = logging.getLogger(__name__)


def evaluate(model_or_name: Any, task: str | None = None, *, budget_s: float | None = None,
             steps: int | None = None, seed: int = 0, pretrained: bool | None = None, progress: bool = False,
             model_args: dict[str, Any] | None = None, device: Any = None, **kwargs: Any):
    """Evaluate a model on a task and return a ``Result`` with the task's baselines beside it.

    A name is created first (``pretrained`` defaults to True for ``arch.tag``/``hf-hub:`` names).
    Models without pretrained weights are trained under the task's budget first. ``progress=True``
    shows the task's progress bars (the CLI does on a terminal). ``model_args`` are builder arguments
    for a name (as in ``zoo.create``); ``kwargs`` are the task's own options. ``device`` (``"cuda"``, ...) moves the
    model there first; the task puts its data and baselines where the model is (``zoo.task.model_device``).

    >>> r = zoo.evaluate("derf_vit", steps=100)  # doctest: +SKIP
    >>> print(r.table("derf_vit"))               # doctest: +SKIP
    """
    from .factory import create, resolve_target

    if isinstance(model_or_name, str):
        name = model_or_name
        if pretrained is None:
            pretrained = "." in name.split(":")[-1] or name.startswith(("hf-hub:", "local-dir:"))
        import torch

        torch.manual_seed(seed)  # the same initialisation in every process (and under torchrun, every rank)
        model = create(name, pretrained=pretrained, device=device, **(model_args or {}))
    else:
        if model_args:
            raise ZooError("model_args= builds a model from a name; this model is already built")
        model = model_or_name
        if device is not None:
            from .task import resolve_device

            model = model.to(resolve_device(device))
    prov = getattr(model, "zoo", None)
    task = task or getattr(prov, "task", None)
    if task is None:
        raise TaskNotFound("this model names no task; pass task=... (see `zoo list` for each model's task)")
    spec = registry.task(task)
    fn = resolve_target(spec.evaluate)
    params = inspect.signature(fn).parameters
    takes = lambda k: k in params or any(p.kind is p.VAR_KEYWORD for p in params.values())  # noqa: E731
    if prov is not None and prov.name and "rebuild" in params:  # only tasks that name it
        # the task may need a fresh copy at another size (formula inputs, graph nodes): it never imports
        # the factory, so it gets this callable instead
        def rebuild(**overrides: Any):
            return create(prov.name, device=device, **{**dict(prov.model_args), **overrides})
        kwargs.setdefault("rebuild", rebuild)
    if kwargs.get("out_dir") is not None and "out_dir" not in params:
        raise ZooError(f"task {task} writes no figures, so it takes no out_dir (--out); tasks that do: "
                       f"{', '.join(_tasks_with_figures()) or 'none installed'}")
    if progress and takes("progress"):
        kwargs["progress"] = True  # progress bars only where the task draws them, and only when asked
    try:
        result = fn(model, budget_s=budget_s, steps=steps, seed=seed, **kwargs)
    except TypeError as exc:
        bad = [k for k in kwargs if f"'{k}'" in str(exc) and "unexpected keyword argument" in str(exc)]
        if not bad:
            raise
        raise UnknownArgument(
            f"task {task} has no option {bad[0]!r} ({exc}); its options are listed by its describe() "
            f"(README task table). Builder arguments go to the model: zoo.evaluate(NAME, model_args={{{bad[0]!r}: ...}}) "
            f"or `zoo eval NAME --set {bad[0]}=...`") from None
    if prov is not None and hasattr(prov, "metrics"):
        from dataclasses import replace

        # save_pretrained / push_to_hub put these on the model card (prefixed by the task, since a model can be
        # evaluated on several)
        numbers = {f"{task}/{k}": float(v) for k, v in result.metrics.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        model.zoo = replace(prov, metrics={**dict(prov.metrics), **numbers})
    return result


def _tasks_with_figures() -> list[str]:
    """Installed tasks whose evaluate takes ``out_dir``."""
    from .factory import resolve_target

    out = []
    for name, (spec, _plugin) in sorted(registry.catalog().tasks.items()):
        try:
            if "out_dir" in inspect.signature(resolve_target(spec.evaluate)).parameters:
                out.append(name)
        except Exception:  # noqa: BLE001 - a task that fails to import is simply not listed here
            continue
    return out
