"""zoo hooks for fv-steer-vs-decode: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Steerable but Not Decodable: Function Vectors Operate Beyond the Logit Lens", year=2026,
              arxiv="2604.02608", url="https://arxiv.org/abs/2604.02608", catalog=14)

CLAIM = ("Function vectors steer where the logit lens decodes nothing: over (task, layer) cells of the icl_toy token "
         "GPT, 'steerable but not decodable' (FV zero-shot accuracy gain > 0.1, logit-lens answer accuracy < 0.5 on "
         "in-context prompts) is common while 'decodable but not steerable' is nearly empty, for the function vector "
         "of zoo-function-vectors (Todd et al.'s top-k heads) and for the paper's mean-difference FV; and the FV "
         "projected through the unembedding gives incoherent tokens (top-5 no more inside the task's output domain "
         "than a random vector of the same norm, within 0.2)")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="steer-decode", function="zoo_fv_steer_vs_decode.tool:steer_decode_tool", paper=PAPER,
                     inputs="one or more layers, each (N >= 10, D), with integer labels (the answers; token ids when "
                            "unembed= (V, D) is given); optional unembed_bias= (V,), layer_norm=, types= (a concept "
                            "name or (N,) array: H&L control types; default concept 'type', else one per input), "
                            "steer_gain= (one per layer), vectors= (K, D) with domains= (K token-id lists) and top_k= (5), "
                            "test_frac= (0.5), hidden=, steps=, lens_steps=, seed=",
                     outputs="layers: {name: {probe, control, selectivity, logit_lens, tuned_lens, decodable, "
                             "steer_gain, steerable}}; contingency {steerable_decodable, steerable_not_decodable, "
                             "decodable_not_steerable, neither, cells} with steer_gain; vectors {entropy, top, "
                             "coherence, domain_mass} with vectors=; a PNG with out_dir",
                     description="held-out decodability of the label per layer (logit lens, diagonal tuned lens, "
                                 "2-layer MLP probe with a Hewitt & Liang control task), the steerable x decodable "
                                 "contingency over layers, and steering vectors' token distributions through the "
                                 "unembedding")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="fv-steer-vs-decode", claim=CLAIM, reproduce="zoo_fv_steer_vs_decode.reproduce:REPRODUCTION",
                      task="icl_toy", paper=PAPER)]
