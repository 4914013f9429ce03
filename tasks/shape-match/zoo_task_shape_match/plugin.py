"""zoo plugin of the task distribution: the spec of shape_match (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="shape_match",
        contract="a functional-map regulariser: regularizer(C (B, k, k), evals_x (B, k), evals_y (B, k)) -> (B,), "
                 "differentiable in C; forward is the same call; optional training_loss(C (B, k, k)) -> scalar (the "
                 "task trains on ground-truth maps of the training categories) and score(C, sigma) (diffusion priors)",
        evaluate="zoo_task_shape_match.task:evaluate",
        example_input="zoo_task_shape_match.task:example_input",
        check_output="zoo_task_shape_match.task:check_output",
        describe="zoo_task_shape_match.task:describe",
        baselines=("lap_ortho", "ortho", "none"),
        description="zero-shot non-rigid matching: deformed ellipsoids, tori, bumpy spheres and superquadrics with a "
                    "planted correspondence, cotangent-Laplacian eigenbases (k=30), WKS + landmark heat-kernel "
                    "descriptors; maps solved with each regulariser (weights tuned on training categories), scored "
                    "on held-out categories by normalised geodesic error",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
