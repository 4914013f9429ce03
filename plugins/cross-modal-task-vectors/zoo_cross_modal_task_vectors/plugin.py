"""zoo hooks for cross-modal-task-vectors: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Task Vectors are Cross-Modal", year=2024, arxiv="2410.22330",
              url="https://arxiv.org/abs/2410.22330", code="https://github.com/g-luo/vlm_cross_modal_reps",
              catalog=32)

CLAIM = ("VLM task vectors are shared across modalities and specifications: in a tiny digit VLM (digit images and "
         "digit-name tokens, six tasks given by exemplars or an instruction token), the mean last-token residual of "
         "text-exemplar prompts, patched into zero-shot image queries, makes the model do the task far more often "
         "than no vector or the all-task mean vector; same-task vectors from text exemplars, image exemplars and "
         "instructions are more similar than vectors of different tasks; and averaging a few-example exemplar "
         "vector with an instruction vector beats the exemplar vector alone")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="task-vector-similarity", function="zoo_cross_modal_task_vectors.tool:similarity_tool",
                     paper=PAPER,
                     inputs="one or more layers, each (N >= 2, D) or (N, T, D) (last token by default, pool=); labels "
                            "= the task of each input (>= 2 tasks); spec= an (N,) array or concept name saying how "
                            "each input specified its task (text / image / instruction ...); center= (True)",
                     outputs="layers: {name: {groups, cosine (K, K), same_task, different_task, gap, "
                             "nearest_same_task, center}}; a cosine-heatmap PNG with out_dir",
                     description="cosine similarity of the per-(task, specification) mean vectors (task vectors) and "
                                 "how much more similar same-task vectors specified differently are than "
                                 "different-task vectors")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="cross-modal-task-vectors", claim=CLAIM,
                      reproduce="zoo_cross_modal_task_vectors.reproduce:REPRODUCTION", task=None, paper=PAPER)]
