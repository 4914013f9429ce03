"""zoo hooks for value-aware-attn: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Value-aware Approximate Attention", year=2021, arxiv="2103.09857",
              url="https://arxiv.org/abs/2103.09857", catalog=24)

CLAIM = ("The best r-sparse approximation of attention chosen for the output (value-aware, minimising ||(A - A~)V||) "
         "has a substantially smaller output error than the best value-oblivious one (the r largest weights), on "
         "synthetic queries, keys and values and on a char-LM's, and the gap is larger for less skewed kernels "
         "(softmax at a higher temperature)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="attention_probe_gpt", builder="zoo_value_aware_attn.model:attention_probe_gpt",
                      task="char_lm", paper=PAPER,
                      description="the char_lm reference GPT at dim 64, 2 layers, 4 heads, with qkv(ids) returning "
                                  "each layer's per-head queries, keys and values: the trained LM whose attention "
                                  "the value-aware-attn tool measures")]


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="value-aware-attn", function="zoo_value_aware_attn.tool:value_aware_error", paper=PAPER,
                     inputs="layers q, k, v (names set by q=, k=, v=): (N, T, heads * d) token activations of the "
                            "same N sequences; heads= splits the features",
                     outputs="results: {'<kernel>/r=<r>': {oblivious (top-r renormalised), oblivious_raw (top-r), "
                             "aware, ratio, exact_fraction}}: output errors relative to ||AV||; a PNG with out_dir",
                     description="value-oblivious (top-r) vs value-aware optimal r-sparse attention, per kernel "
                                 "(softmax at temperatures, relu, quadratic) and r")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="value-aware-attn", claim=CLAIM, reproduce="zoo_value_aware_attn.reproduce:REPRODUCTION",
                      task="char_lm", paper=PAPER)]
