"""zoo plugin of the task distribution: the spec of code_text (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="code_text",
        contract="doc2sig (input_kind 'ranker'): rank(text, candidates) -> scores (n,) or score_matrix(texts, "
                 "candidates) -> (Q, N), optional fit(train_pairs, *, steps, seed); lm ('tokens'): model(ids (B, T)) "
                 "-> logits (B, T, 97), optional infill(prefix, suffix, max_len) -> str; vulloc ('bags'): "
                 "model(tokens (B, S, T), mask (B, S)) -> {'function_logit': (B,), 'statement_scores': (B, S)}",
        evaluate="zoo_task_code_text.task:evaluate",
        example_input="zoo_task_code_text.task:example_input",
        check_output="zoo_task_code_text.task:check_output",
        describe="zoo_task_code_text.task:describe",
        baselines=("bm25", "bow", "gpt", "attn_mil", "mean_bag"),
        description="the Python standard library's own text: docstring first sentence -> formal signature retrieval "
                    "(~2,000 pairs mined with inspect from 110 modules; acc@1, MRR vs BM25 and TF-IDF), char-level "
                    "LM bits/char and infill exact match of held-out lines (char_lm's stdlib source; the reference "
                    "char GPT fills left to right), and synthetic vulnerable-function bags trained on function labels "
                    "only (function F1, statement top-1/top-3 localisation vs attention MIL and a mean-bag scorer)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
