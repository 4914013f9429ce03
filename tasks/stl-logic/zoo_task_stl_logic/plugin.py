"""zoo plugin of the task distribution: the spec of stl_logic (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="stl_logic",
        contract="a model sets input_kind: 'formula': encode(ids (B, T) long) -> (B, D), forward = encode, optional "
                 "fit(ids, robustness (N, M), *, steps, seed); 'embedding': forward(embedding (B, D), ids (B, T)) -> "
                 "logits (B, T, V), decode(embedding (B, D)) -> list[str] (infix STL), optional fit(embeddings, ids, "
                 "*, steps, seed, batch_size); tokens and strings from zoo_task_stl_logic.syntax",
        evaluate="zoo_task_stl_logic.task:evaluate",
        example_input="zoo_task_stl_logic.task:example_input",
        check_output="zoo_task_stl_logic.task:check_output",
        describe="zoo_task_stl_logic.task:describe",
        baselines=("kernel", "bag_of_tokens", "random_encoder", "nn_retrieval"),
        description="Signal Temporal Logic: random formulae of the STL-kernel papers' generator, robustness on "
                    "piecewise-linear trajectories of their base measure, and the STL kernel; embed (Spearman vs the "
                    "kernel, robustness R^2 and satisfaction accuracy of a ridge readout, encode vs kernel cost) and "
                    "invert (validity, kernel similarity and length of decoded vs gold formulae)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
