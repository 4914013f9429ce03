"""The core's own plugin: the standard tasks (specs only; no torch import).

Each task family keeps its specs in a torch-free ``zoo/tasks/*_specs.py`` module listed here.
"""
from __future__ import annotations

import importlib

from .hookspecs import hookimpl
from .specs import TaskSpec

_SPEC_MODULES = (
    "zoo.tasks.digits_specs",
    "zoo.tasks.inr_specs",
    "zoo.tasks.signal_set_specs",
    "zoo.tasks.layer_specs",
    "zoo.tasks.lm_specs",
    "zoo.tasks.retrieval_specs",
    "zoo.tasks.graph_specs",
)


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return [spec for module in _SPEC_MODULES for spec in importlib.import_module(module).TASKS]
