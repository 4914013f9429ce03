"""zoo: a plugin-based model zoo for representation-learning research.

    >>> import zoo
    >>> zoo.list_models("derf*")          # doctest: +SKIP
    >>> model = zoo.create("derf_vit")    # doctest: +SKIP

Attributes are loaded lazily, so ``import zoo`` costs milliseconds and imports no torch; only
``create``/``evaluate`` and friends import torch, when they run.
"""
from __future__ import annotations

import importlib

TYPE_CHECKING = False  # importing typing would be most of the cost of `import zoo`

__version__ = "0.2.0"

_LAZY = {
    # registry (no torch)
    "list_models": "zoo.registry", "info": "zoo.registry", "plugins": "zoo.registry",
    "parse_model_name": "zoo.registry",
    # specs and hooks (no torch)
    "Paper": "zoo.specs", "ModelSpec": "zoo.specs", "WeightsSpec": "zoo.specs", "TaskSpec": "zoo.specs",
    "ClaimSpec": "zoo.specs", "PluginStatus": "zoo.specs", "hookimpl": "zoo.hookspecs",
    # errors
    "ZooError": "zoo.errors", "ModelNotFound": "zoo.errors", "PluginNotInstalled": "zoo.errors",
    "PluginBroken": "zoo.errors", "PluginCollision": "zoo.errors", "WeightsNotFound": "zoo.errors",
    "WeightsCorrupt": "zoo.errors", "UnsafeConfig": "zoo.errors", "TaskNotFound": "zoo.errors",
    "WeightsMismatch": "zoo.errors", "DownloadFailed": "zoo.errors", "UnknownArgument": "zoo.errors",
    "NotAZooModel": "zoo.errors", "ClaimNotFound": "zoo.errors", "NotAZooConfig": "zoo.errors", "PushFailed": "zoo.errors",
    "DeviceUnavailable": "zoo.errors", "ToolNotFound": "zoo.errors", "ToolSpec": "zoo.specs",
    "list_tools": "zoo.registry", "tool_info": "zoo.registry",
    # analysis tools on activations (torch, when called)
    "ActivationSet": "zoo.activations", "activations": "zoo.activations", "analyze": "zoo.activations",
    # model creation and the Hub (torch, when called)
    "create": "zoo.factory", "save_pretrained": "zoo.factory", "push_to_hub": "zoo.factory",
    "Provenance": "zoo.factory", "evaluate": "zoo.evaluation",
    "Result": "zoo.task", "ClaimResult": "zoo.claims", "Claim": "zoo.claims", "Row": "zoo.claims",
    "Check": "zoo.claims", "reproduce": "zoo.claims", "train": "zoo.training",
}
_RENAMED = {"reload_plugins": ("zoo.registry", "reload")}

__all__ = sorted([*_LAZY, *_RENAMED, "__version__"])


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _RENAMED:
        module, attr = _RENAMED[name]
        value = getattr(importlib.import_module(module), attr)
    else:
        raise AttributeError(f"module 'zoo' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # static imports for IDEs and type checkers
    from .activations import ActivationSet, activations, analyze  # noqa: F401
    from .claims import Check, Claim, ClaimResult, Row, reproduce  # noqa: F401
    from .errors import (  # noqa: F401
        ClaimNotFound,
        DeviceUnavailable,
        DownloadFailed,
        ModelNotFound,
        NotAZooConfig,
        NotAZooModel,
        PluginBroken,
        PluginCollision,
        PluginNotInstalled,
        PushFailed,
        TaskNotFound,
        ToolNotFound,
        UnknownArgument,
        UnsafeConfig,
        WeightsCorrupt,
        WeightsMismatch,
        WeightsNotFound,
        ZooError,
    )
    from .evaluation import evaluate  # noqa: F401
    from .factory import Provenance, create, push_to_hub, save_pretrained  # noqa: F401
    from .hookspecs import hookimpl  # noqa: F401
    from .registry import info, list_models, list_tools, parse_model_name, plugins, tool_info  # noqa: F401
    from .specs import ClaimSpec, ModelSpec, Paper, PluginStatus, TaskSpec, ToolSpec, WeightsSpec  # noqa: F401
    from .task import Result  # noqa: F401
    from .training import train  # noqa: F401
