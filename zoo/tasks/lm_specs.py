"""Specs of the lm tasks (torch-free; each task's code is its own module in zoo/tasks/)."""
from ..specs import TaskSpec  # noqa: F401

TASKS: list = []
