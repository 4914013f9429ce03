"""``zoo.train``: train a pretrained tag with its plugin's recipe, then save, push and record it.

A tag's recipe is a ``"module:attr"`` on its ``WeightsSpec``: ``recipe(seed=...) -> (model, metrics)``,
where the metrics are measured by the recipe on the task (they go on the model card and into
registry.yaml). Nothing here trains by itself: the recipe owns the protocol.
"""
from __future__ import annotations

import datetime
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import hubformat, registry
from .errors import NotAZooModel, ZooError
from .task import status

log = logging.getLogger(__name__)


@dataclass
class Trained:
    """What ``zoo.train`` returns: the trained model, its metrics, and where it went."""

    name: str
    model: Any
    metrics: dict[str, float]
    seed: int
    folder: Path | None = None
    repo: str | None = None
    commit: str | None = None
    record: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # file -> sha256 of what was saved or pushed


def train(name: str, *, seed: int = 0, out: str | os.PathLike | None = None, push: bool | str = False,
          record: str | os.PathLike | bool | None = None) -> Trained:
    """Train ``name`` (``ARCH.TAG``) with its recipe; optionally save to ``out``, push, and record.

    ``push=True`` pushes to the tag's own repo, a string pushes to that repo instead (through
    ``HF_ENDPOINT``, e.g. the local hub). ``record=True`` writes the metrics (and the commit when
    pushed) to ``./registry.yaml``, a path writes there.

    >>> t = zoo.train("gon_implicit.digits", out="gon-digits")   # doctest: +SKIP
    >>> t.metrics["psnr_test"]                                     # doctest: +SKIP
    """
    from .factory import Provenance, push_to_hub, resolve_target, save_pretrained

    spec, plugin_id, tag = registry.lookup(name)
    if tag is None:
        raise ZooError(f"name a pretrained tag to train: `zoo train {spec.name}.TAG` "
                       f"(tags: {', '.join(spec.weights) or 'none'})")
    weights = spec.weights[tag]
    if weights.recipe is None:
        raise ZooError(f"{name} has no recipe: its weights come from {weights.source}")
    path = Path("registry.yaml" if record is True else record) if record else None
    if path is not None:  # fail before training, not after an hour of it
        from . import registry_file

        registry_file.check_recordable(path, plugin_id)
    status(f"training {name} with its recipe {weights.recipe} (seed {seed}) ...")
    t0 = time.perf_counter()
    model, metrics = resolve_target(weights.recipe, plugin_id)(seed=seed)
    status(f"trained {name} in {time.perf_counter() - t0:.0f} s: "
           + ", ".join(f"{k} {v:.4g}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in list(metrics.items())[:4]))
    if not isinstance(getattr(model, "zoo", None), Provenance):
        raise NotAZooModel(f"the recipe {weights.recipe} returned a model that zoo.create did not build, so zoo cannot "
                           f"save or push it; build it in the recipe with zoo.create({spec.name!r}, ...)")
    model.zoo = replace(model.zoo, tag=tag)
    result = Trained(name=name, model=model, metrics=dict(metrics), seed=seed)
    result.record = {"metrics": result.metrics, "recipe": weights.recipe, "seed": seed,
                     "date": datetime.date.today().isoformat()}
    with tempfile.TemporaryDirectory() as tmp:
        # the files are written once to learn their sha256 (saving is deterministic: a push writes the same bytes)
        folder = Path(out) if out is not None else Path(tmp) / "saved"
        folder = Path(save_pretrained(model, folder, metrics=result.metrics, overwrite_card=True))
        result.files = hubformat.manifest({n: folder / n for n in (hubformat.CONFIG_NAME, hubformat.WEIGHTS_NAME)})
    if out is not None:
        result.folder = folder
        log.info("saved %s to %s", name, result.folder)
    if push:
        result.repo = weights.repo if push is True else str(push)
        status(f"pushing {name} to {result.repo} ...")
        result.commit = push_to_hub(model, result.repo, metrics=result.metrics, overwrite_card=True)
        result.record.update(repo=result.repo, commit=result.commit)
        status(f"pushed {name} to {result.repo}@{result.commit}")
    if path is not None:
        registry_file.record(path, plugin_id, "pretrained", {f"{spec.name}.{tag}": result.record})
    return result
