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
    "UnknownArgument",
    "NotAZooModel",
    "WeightsNotFound",
    "WeightsCorrupt",
    "WeightsMismatch",
    "DownloadFailed",
    "PushFailed",
    "UnsafeConfig",
    "NotAZooConfig",
    "TaskNotFound",
    "ClaimNotFound",
    "DeviceUnavailable",
    "ToolNotFound",
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


class UnknownArgument(ZooError, TypeError):
    """A builder argument the model does not take, or a value of the wrong type for one it takes.

    The message names the argument and its value, and lists the valid names or the expected type.
    """


class NotAZooModel(ZooError, TypeError):
    """A module not created by ``zoo.create``: zoo does not know its name and arguments, so cannot save it."""


class WeightsNotFound(ZooError, FileNotFoundError):
    """No pretrained weights for this name, or they are not reachable (offline with nothing cached)."""


class WeightsCorrupt(ZooError, ValueError):
    """A weight file does not match its sha256, or is not a readable safetensors file."""


class WeightsMismatch(ZooError, RuntimeError):
    """The weights do not fit the architecture: the message lists missing and unexpected keys, or shapes."""


class DownloadFailed(ZooError, OSError):
    """A transfer from the Hub broke off (connection cut, server error, full disk); retrying resumes it."""


class PushFailed(ZooError, OSError):
    """A push to the Hub could not be made (unreachable, refused, unauthorised); a push is one commit, so a failed
    one leaves the repo as it was."""


class UnsafeConfig(ZooError, ValueError):
    """A config.json asks zoo for something it must never do (import a module, run a builder it names)."""


class NotAZooConfig(ZooError, ValueError):
    """A repo or folder whose config.json was not written by zoo (a timm or transformers repo, say): nothing unsafe,
    just not something ``zoo.create`` can rebuild; the message says which library reads it."""


class TaskNotFound(ZooError, KeyError):
    """No installed plugin or the core provides this task."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ClaimNotFound(ZooError, LookupError):
    """The plugin registers no claim for ``zoo reproduce``, or no installed plugin has that id."""


class DeviceUnavailable(ZooError, RuntimeError):
    """A device was asked for (``device=``, ``--device``) that this torch build or machine does not have."""


class ToolNotFound(ZooError, KeyError):
    """No installed plugin registers this analysis tool (``zoo list --tools``)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""
