"""zoo plugin of the task distribution: the spec of rep_metrics (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="rep_metrics",
        contract="the 'model' is an analysis tool: a callable tool(sets: {name: ActivationSet}, **options) -> dict or "
                 "a tool name (`zoo list --tools`, then each set is analysed on its own); evaluate records the "
                 "sources (trained digits classifiers per seed, their random-init twins, raw pixels) on the digits "
                 "probe split and returns the tool's numbers as metrics (zoo_task_rep_metrics.task)",
        evaluate="zoo_task_rep_metrics.task:evaluate",
        probe_data="zoo_task_rep_metrics.task:probe_data",
        describe="zoo_task_rep_metrics.task:describe",
        description="activation sets with known relations for representation-metric tools: small MLP/CNN "
                    "classifiers trained on scikit-learn's digits with different seeds (cached as safetensors), "
                    "their random-init twins and the raw pixels, all on the 450-image digits test split; planted "
                    "shape x colour x position images with object masks and held-out (shape, colour) pairs, and a "
                    "cached CNN with one head per concept; and the shared statistics (linear/RBF CKA, debiased CKA, "
                    "CCA/SVCCA, RDMs and RSA)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
