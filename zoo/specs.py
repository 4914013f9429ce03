"""The data a plugin hands to zoo: frozen descriptions, no behaviour.

Plugins build these in their ``plugin.py`` (which must not import torch); builders and other
callables are ``"module:attr"`` strings that zoo resolves only when a model is created or a
reproduction is run, so listing never imports model code.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .ids import is_commit, is_name, is_sha256

__all__ = ["Paper", "WeightsSpec", "ModelSpec", "TaskSpec", "ClaimSpec", "PluginStatus"]

_TARGET_RE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
# "package:folder/inside/it": a Hub-format snapshot shipped in a plugin's distribution (no '..', no absolute path)
_SNAPSHOT_RE = re.compile(r"[A-Za-z_]\w*:[\w.\-]+(/[\w.\-]+)*")
SNAPSHOT_FILES = ("config.json", "model.safetensors")


def _check_target(what: str, value: str | None) -> None:
    if value is not None and not _TARGET_RE.fullmatch(value):
        raise ValueError(f"{what} must be a 'module:attr' string, got {value!r}")


@dataclass(frozen=True)
class Paper:
    """The paper a model or claim comes from (``catalog`` is its entry number in CATALOG.md)."""

    title: str
    year: int | None = None
    arxiv: str | None = None
    url: str | None = None
    code: str | None = None
    catalog: int | None = None


@dataclass(frozen=True)
class WeightsSpec:
    """Where a pretrained tag's weights live, and how they were produced.

    ``files`` maps file names to their sha256: the bytes that may be loaded under this tag, wherever they
    come from. ``revision`` is a 40-hex commit when the Hub copy is pinned too (a cached copy is then used
    with no network call). With ``files`` empty, ``revision`` (a branch) is resolved to one commit at load
    time and verified against the sha256 manifest in that commit's ``config.json``.

    ``snapshot`` (``"package:folder"``) names a Hub-format folder (config.json, model.safetensors, card)
    shipped inside the plugin's distribution: a read-only mirror of the repo, loaded offline after the same
    sha256 check against ``files`` (which must then pin ``config.json`` and ``model.safetensors``).
    """

    repo: str
    revision: str = "main"
    files: Mapping[str, str] = field(default_factory=dict)
    source: str = "zoo"  # "zoo": trained here by `recipe`; "official": converted from the authors' release
    recipe: str | None = None  # "module:attr" run by `zoo train NAME.TAG`
    converter: str | None = None  # "module:attr" run by `zoo convert` for official checkpoints
    metrics: Mapping[str, float] = field(default_factory=dict)  # only figures measured by zoo
    description: str = ""
    snapshot: str | None = None  # "package:folder" inside the plugin's distribution (see above)

    def __post_init__(self) -> None:
        if self.repo.count("/") != 1 or not all(self.repo.split("/")):
            raise ValueError(f"WeightsSpec.repo must look like 'org/name', got {self.repo!r}")
        if self.source not in ("zoo", "official"):
            raise ValueError(f"WeightsSpec.source must be 'zoo' or 'official', got {self.source!r}")
        for name, digest in self.files.items():
            if not is_sha256(digest):
                raise ValueError(f"WeightsSpec.files[{name!r}] must be a sha256 hex digest, got {digest!r}")
        if self.snapshot is not None:
            if not _SNAPSHOT_RE.fullmatch(self.snapshot) or ".." in self.snapshot.split(":", 1)[1].split("/"):
                raise ValueError(f"WeightsSpec.snapshot must be 'package:folder/inside/it', got {self.snapshot!r}")
            missing = [f for f in SNAPSHOT_FILES if f not in self.files]
            if missing:
                raise ValueError(f"WeightsSpec.snapshot {self.snapshot!r} needs the sha256 of {missing} in files=")
        _check_target("WeightsSpec.recipe", self.recipe)
        _check_target("WeightsSpec.converter", self.converter)

    @property
    def pinned(self) -> bool:
        """True when the Hub copy is pinned to one commit."""
        return is_commit(self.revision)

    @property
    def hashed(self) -> bool:
        """True when the weight file's sha256 is fixed here (loads are checked against it from any source)."""
        return "model.safetensors" in self.files


@dataclass(frozen=True)
class ModelSpec:
    """One architecture a plugin provides; ``name`` is unique across all installed plugins."""

    name: str
    builder: str
    task: str | None = None
    paper: Paper | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    weights: Mapping[str, WeightsSpec] = field(default_factory=dict)
    description: str = ""
    license: str = "mit"
    default_tag: str | None = None

    def __post_init__(self) -> None:
        if not is_name(self.name):
            raise ValueError(f"model name {self.name!r} must be lowercase letters, digits, '_' or '-'")
        _check_target(f"ModelSpec({self.name}).builder", self.builder)
        for tag in self.weights:
            if not is_name(tag):
                raise ValueError(f"tag {tag!r} of {self.name} must be lowercase letters, digits, '_' or '-'")
        if self.default_tag is not None and self.default_tag not in self.weights:
            raise ValueError(f"default_tag {self.default_tag!r} of {self.name} is not one of its weights")

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(self.weights)

    @property
    def pretrained_tag(self) -> str | None:
        """The tag ``create(name, pretrained=True)`` loads: ``default_tag`` or the first one."""
        return self.default_tag or next(iter(self.weights), None)


@dataclass(frozen=True)
class TaskSpec:
    """A standard task: its forward contract, its evaluate function and its baselines."""

    name: str
    contract: str
    evaluate: str
    description: str = ""
    baselines: tuple[str, ...] = ()
    example_input: str | None = None  # "module:attr": () -> example input (a tensor, or a tuple of args)
    check_output: str | None = None  # "module:attr": (model, output) -> None, raises if the contract is broken
    describe: str | None = None  # "module:attr": (**options) -> dict of the protocol's settings
    # "module:attr": (n=None, seed=0, **options) -> (inputs, labels): held-out inputs for `zoo analyze`
    probe_data: str | None = None

    def __post_init__(self) -> None:
        _check_target(f"TaskSpec({self.name}).evaluate", self.evaluate)
        _check_target(f"TaskSpec({self.name}).probe_data", self.probe_data)
        _check_target(f"TaskSpec({self.name}).describe", self.describe)
        _check_target(f"TaskSpec({self.name}).example_input", self.example_input)
        _check_target(f"TaskSpec({self.name}).check_output", self.check_output)


@dataclass(frozen=True)
class ClaimSpec:
    """A paper's claim in small-scale form, and the function that measures it (``zoo reproduce ID``).

    ``not_measured`` (instead of ``reproduce``): why the claim cannot be measured here, for a plugin that ships only
    the part of a method that could be pinned down exactly; registry.yaml then says ``partial`` with this reason.
    """

    plugin: str
    claim: str
    reproduce: str = ""
    task: str | None = None
    paper: Paper | None = None
    budget_s: float = 180.0
    not_measured: str | None = None

    def __post_init__(self) -> None:
        if self.not_measured is not None:
            if self.reproduce or not self.not_measured.strip():
                raise ValueError(f"ClaimSpec({self.plugin}): not_measured takes the reason the claim is not measured, "
                                 "and then no reproduce entry point")
            return
        _check_target(f"ClaimSpec({self.plugin}).reproduce", self.reproduce)


@dataclass(frozen=True)
class ToolSpec:
    """An analysis tool a plugin provides (a paper that ships a measurement, not a model): applied to any zoo model's
    activations (``zoo.activations``) or to raw arrays; ``name`` is unique across all installed plugins.

    ``function`` is ``"pkg.module:fn"`` with ``fn(acts: ActivationSet, *, labels=None, out_dir=None, **options) ->
    dict`` of plain data (numbers, lists, nested dicts; PNG paths under ``"artifacts"``). ``inputs`` and ``outputs``
    say in words what it needs (layers, labels or concepts, sample counts) and what it returns.
    """

    name: str
    function: str
    inputs: str = ""
    outputs: str = ""
    paper: Paper | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not is_name(self.name):
            raise ValueError(f"tool name {self.name!r} must be lowercase letters, digits, '_' or '-'")
        _check_target(f"ToolSpec({self.name}).function", self.function)


@dataclass(frozen=True)
class PluginStatus:
    """What discovery found for one entry point: ``state`` is "ok", "broken" or "disabled"."""

    id: str
    dist: str | None
    version: str | None
    state: str
    error: str | None = None
    models: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    module: str | None = None
    tools: tuple[str, ...] = ()
