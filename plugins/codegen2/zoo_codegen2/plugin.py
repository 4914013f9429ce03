"""zoo hooks for CodeGen2: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="CodeGen2: Lessons for Training LLMs on Programming and Natural Languages", year=2023,
              arxiv="2305.02309", code="https://github.com/salesforce/CodeGen2", catalog=72)

CLAIM = ("One decoder trained with CodeGen2's unified objective (causal LM on half the sequences, file-level span "
         "corruption with sentinel tokens on the other half) supports both left-to-right modelling and infilling: "
         "on CPython's stdlib source at char level its validation bits/char stay within a fixed margin of the same "
         "decoder trained causal-only for the same steps, while its sentinel-format infill exact match on held-out "
         "lines beats the causal-only decoder writing the line left to right by a fixed margin")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="codegen2", builder="zoo_codegen2.model:codegen2", task="code_text", paper=PAPER,
        defaults={"preset": "cpu"},
        weights={"official": WeightsSpec(
            repo="zoo-models/codegen2-1b", source="official", converter="zoo_codegen2.hub:from_official",
            description="converted from the authors' release (Hugging Face Salesforce/codegen2-1B; 3.7B/7B/16B share "
                        "the layout): `zoo convert codegen2.official DIR/model.safetensors --to OUT` with config.json "
                        "beside it renames CodeGenForCausalLM's tensors and re-lays out its 4-way fused qkv; tested "
                        "offline on a scaled-down state dict with the released names, not on a download")},
        description="CodeGen decoder (parallel attention+MLP blocks, partial rotary, fused qkv) with the infill "
                    "sentinels <mask_k>/<sep>/<eom>/<|endoftext|> appended to char_lm's 97 characters; CPU default "
                    "dim 64, depth 4, 4 heads, rotary 8/16, block 128; preset='paper' for CodeGen2-1B's shape; "
                    "zoo_codegen2.objective.train(model, steps=...) trains with the mixed objective")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="codegen2", claim=CLAIM, reproduce="zoo_codegen2.reproduce:REPRODUCTION",
                      task="code_text", paper=PAPER, budget_s=60.0)]
