"""Specs of the lm tasks (torch-free; each task's code is its own module in zoo/tasks/)."""
from ..specs import TaskSpec

TASKS: list = [
    TaskSpec(
        name="char_lm",
        contract="model(ids: (B, T) long in [0, 97), T <= block_size) -> next-character logits (B, T, 97); "
                 "GPT-like models expose mlps() whose mlp.hidden hook gives the MLP activations",
        evaluate="zoo.tasks.char_lm:evaluate",
        example_input="zoo.tasks.char_lm:example_input",
        check_output="zoo.tasks.char_lm:check_output",
        baselines=("gpt-ln-relu", "gpt-ln-gelu", "gpt-ln-swiglu", "gpt-rms-relu", "gpt-rms-gelu", "gpt-rms-swiglu"),
        description="character-level LM on a fixed list of CPython 3.11 stdlib source files (sha256 recorded), "
                    "every 10th 10k-char chunk held out; AdamW with warm-up + cosine for a step budget; "
                    "validation bits/char, per-layer MLP activation sparsity, seconds per step, next to the "
                    "reference GPT with LayerNorm/RMSNorm and ReLU/GELU/SwiGLU at equal parameters",
    ),
]
