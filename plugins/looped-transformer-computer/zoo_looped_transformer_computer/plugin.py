"""zoo hooks for looped-transformer-computer: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Looped Transformers as Programmable Computers", year=2023, arxiv="2301.13196", catalog=101)

CLAIM = ("A constant number of encoder layers with constructed weights, placed in a loop over a punchcard of scratchpad, "
         "memory and instructions, emulates an instruction-set computer: here a 5-layer looped transformer (the paper's "
         "looped transformer has 13 layers) executes SUBLEQ, and every test program of the algorithmic_seq task "
         "(negate, copy, add, counter loop, min, mul) on seeded inputs ends in exactly the memory of the reference "
         "interpreter, while the same layers below the softmax temperature bound, or with one layer replaced by a random "
         "matrix of the same norm, do not")

_TASK = "algorithmic_seq"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="looped_transformer_computer",
                  builder="zoo_looped_transformer_computer.model:looped_transformer_computer", task=_TASK, paper=PAPER,
                  description="looped 5-layer transformer encoder with constructed weights: one SUBLEQ instruction per "
                              "pass over a +-1 binary punchcard (read by attention at a large softmax temperature, "
                              "subtract and branch by ReLU layers); run(memory) loops until halt"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="looped-transformer-computer", claim=CLAIM,
                      reproduce="zoo_looped_transformer_computer.reproduce:REPRODUCTION", task=_TASK, paper=PAPER)]
