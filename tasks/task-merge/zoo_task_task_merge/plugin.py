"""zoo plugin of the task distribution: the spec of task_merge (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="task_merge",
        contract="mode 'merge' (default): the model is a merging method, an nn.Module with merge(suite, *, tasks=None, "
                 "few_shot=None) -> state_dict (few_shot: None or {task: (x, y)}, `shots` per class; it may also take "
                 "seed=, steps=) and optionally stored_floats(suite) -> int and negate(suite, target, *, control) -> "
                 "state_dict; suite = zoo_task_task_merge.suite.build_suite(seed, dataset, tasks): base_state, "
                 "task_states, task_vectors, tasks, architecture(), train/val/test(t), few_shot(t, k, seed), "
                 "unlabeled(t, n), accuracy(state, t). The merged state is loaded into suite.architecture() and "
                 "scored per task: acc/<task>, avg_acc, normalized_acc, stored_floats; negation: neg/target_acc, "
                 "neg/target_drop, neg/control_acc, neg/control_retention. mode 'stitching': "
                 "zoo_task_task_merge.stitching.run(model, ...); suite.architecture()(x, task) -> logits (B, 10) "
                 "(zoo_task_task_merge.task)",
        evaluate="zoo_task_task_merge.task:evaluate",
        describe="zoo_task_task_merge.task:describe",
        baselines=("weight_averaging", "task_arithmetic", "ties", "base", "individual"),
        description="model merging: an MLP encoder (64-256-256, ReLU) pretrained on 8x8 digits (or Fashion-MNIST) "
                    "with frozen per-task prototype heads (Ilharco et al.'s CLIP setting in miniature) and 8 "
                    "fine-tuned variants, one per label task on the same images (parity, >=5, mod 3, mod 4, closed loops, "
                    "prime, <3, mod 5), cached as safetensors; a merger returns one state dict holding all tasks, scored by "
                    "per-task and normalized accuracy against weight averaging, task arithmetic and TIES (lambda on "
                    "validation), with Ilharco et al.'s task-negation protocol for models that negate",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
