"""zoo plugin of the task distribution: the spec of algorithmic_seq (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="algorithmic_seq",
        contract="recall (input_kind 'tokens'): model(ids (B, T)) -> logits (B, T, vocab), answer at the last position; "
                 "sort/hull/tsp (input_kind 'points'): model(points (B, N, d), targets (B, M)) -> logprobs (B, M, N+1) "
                 "(END = N) and model.decode(points, max_len) -> (B, max_len); subleq (input_kind 'machine'): "
                 "model.run(memory (B, n) long, *, max_steps) -> (B, n) long",
        evaluate="zoo_task_algorithmic_seq.task:evaluate",
        example_input="zoo_task_algorithmic_seq.task:example_input",
        check_output="zoo_task_algorithmic_seq.task:check_output",
        describe="zoo_task_algorithmic_seq.task:describe",
        baselines=("transformer", "lstm", "seq2seq"),
        description="associative recall (S key-value pairs then a query; trained on 1-8 pairs, tested up to 32), "
                    "sorting, planar convex hull (train 5-10 points, test 5-20) and TSP (5-8 points, brute-force "
                    "optimum) as pointer problems, and SUBLEQ programs checked exactly against a Python interpreter; "
                    "accuracy (hull area, tour-length ratio) at every test size: length generalisation is always "
                    "reported; baselines a softmax transformer and an LSTM (recall), a fixed-output seq2seq with "
                    "attention (pointer problems), at the model's parameter count",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
