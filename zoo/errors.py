"""zoo's error taxonomy: each error says what was wrong and what to type to fix it.

Modelled on pytest's split between "not found" and "found but broken": a user who mistyped a
name, a user who has not installed a plugin, and a plugin that is installed but crashes each
get a different error.
"""
from __future__ import annotations

__all__ = [
    "ZooError",
    "ModelNotFound",
    "PluginNotInstalled",
    "PluginBroken",
    "PluginCollision",
    "WeightsNotFound",
    "WeightsCorrupt",
    "UnsafeConfig",
    "TaskNotFound",
]


class ZooError(Exception):
    """Base class of every error zoo raises on purpose."""


class ModelNotFound(ZooError, KeyError):
    """No installed plugin provides this name, and no catalogued paper does either."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class PluginNotInstalled(ZooError, ImportError):
    """The name belongs to a plugin that is catalogued but not installed; the message has the pip line."""


class PluginBroken(ZooError, ImportError):
    """The plugin is installed but failed to load or to register; the message carries its error."""


class PluginCollision(PluginBroken):
    """Two plugins register the same model or task name; the message names both distributions."""


class WeightsNotFound(ZooError, FileNotFoundError):
    """No pretrained weights for this name, or they are not reachable (offline with nothing cached)."""


class WeightsCorrupt(ZooError, ValueError):
    """A weight file does not match its sha256, or is not a readable safetensors file."""


class UnsafeConfig(ZooError, ValueError):
    """A config.json asks zoo for something it must never do (import a module, run a builder it names)."""


class TaskNotFound(ZooError, KeyError):
    """No installed plugin or the core provides this task."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
