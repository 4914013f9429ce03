"""zoo plugin of the task distribution: the spec of voxel_encode (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="voxel_encode",
        contract="forward(ctx_feats (B, Nc, F), ctx_resp (B, Nc), query_feats (B, Nq, F)) -> (B, Nq): B voxels, each "
                 "with Nc (image feature, measured response) shots, predicted on Nq query images (F = 64)",
        evaluate="zoo_task_voxel_encode.task:evaluate",
        example_input="zoo_task_voxel_encode.task:example_input",
        check_output="zoo_task_voxel_encode.task:check_output",
        describe="zoo_task_voxel_encode.task:describe",
        baselines=("ridge", "ridge_full", "mean_response"),
        description="few-shot voxelwise encoding: seeded synthetic voxels (sparse nonlinear readouts of a frozen "
                    "random CNN's features of real digits and lfw_subset images, plus noise at a stated SNR); "
                    "meta-train voxels, new voxels scored by Pearson r on held-out images per context size, with "
                    "per-voxel CV ridge (same shots, and all shots as reference) and the mean response as baselines",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
