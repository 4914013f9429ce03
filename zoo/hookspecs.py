"""The whole plugin contract: a plugin implements any of these hooks in its ``plugin.py``.

    from zoo import hookimpl, ModelSpec

    @hookimpl
    def zoo_models():
        return [ModelSpec(name="my_net", builder="zoo_my.model:build", task="digits_classify")]
"""
from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("zoo")
hookimpl = pluggy.HookimplMarker("zoo")


@hookspec
def zoo_models() -> list:
    """Return the plugin's models as a list of ``zoo.ModelSpec``."""


@hookspec
def zoo_tasks() -> list:
    """Return extra standard tasks as a list of ``zoo.TaskSpec``."""


@hookspec
def zoo_claims() -> list:
    """Return the paper claims the plugin can measure (``zoo reproduce``) as ``zoo.ClaimSpec``."""


@hookspec
def zoo_tools() -> list:
    """Return the plugin's analysis tools (applied to any model's activations) as a list of ``zoo.ToolSpec``."""
