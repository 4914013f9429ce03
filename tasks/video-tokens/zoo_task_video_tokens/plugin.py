"""zoo plugin of the task distribution: the spec of video_tokens (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="video_tokens",
        contract="compress(tokens (B, T, N, D)) -> (codebook (B, K, D), index_map (B, T, N) long, -1 = no token "
                 "there); forward(tokens) = compress(tokens)",
        evaluate="zoo_task_video_tokens.task:evaluate",
        example_input="zoo_task_video_tokens.task:example_input",
        check_output="zoo_task_video_tokens.task:check_output",
        describe="zoo_task_video_tokens.task:describe",
        baselines=("full_tokens", "random_prune", "temporal_pool", "kmeans"),
        description="8-frame videos of load_digits images moving by a seeded random walk on a 12x12 canvas, frozen "
                    "random 2x2 patch tokens (T=8, N=36, D=16); a compressor returns a codebook and a position index "
                    "map, the task trains one fixed classifier on the decoded grid: accuracy vs token ratio",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
