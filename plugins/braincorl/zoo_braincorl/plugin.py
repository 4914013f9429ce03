"""zoo hooks for braincorl: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Meta-Learning an In-Context Transformer Model of Human Higher Visual Cortex", year=2025,
              arxiv="2505.15813", code="https://github.com/leomqyu/BraInCoRL", catalog=56)

CLAIM = ("A transformer meta-trained across voxels to read a variable-size context of (image feature, response) pairs "
         "and emit voxelwise encoder weights beats per-voxel ridge regression fitted on the same shots in the "
         "low-data regime (context <= 20 images), and improves with more in-context examples (test-time scaling)")

_TASK = "voxel_encode"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="braincorl", builder="zoo_braincorl.model:braincorl", task=_TASK, paper=PAPER,
                  description="in-context voxelwise encoder: (feature, response) tokens + 4 register tokens, "
                              "log-scaled full self-attention with SwiGLU blocks, the first register token gives the "
                              "voxel's linear weights and bias; meta-trained by the task (presets cpu / paper)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="braincorl", claim=CLAIM, reproduce="zoo_braincorl.reproduce:REPRODUCTION", task=_TASK,
                      paper=PAPER)]
