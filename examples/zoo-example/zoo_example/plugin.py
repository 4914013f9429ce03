"""zoo hooks of the example plugin: one model, its pretrained tag and its claim (specs only: no torch here).

zoo imports this module to list models, so it must stay cheap: builders, recipes and the claim are
``"module:attr"`` strings that zoo resolves only when a model is created or a claim is run.
"""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

# the paper the model's initialisation comes from (He et al. 2015, Sec. 2.2)
PAPER = Paper(title="Delving Deep into Rectifiers: Surpassing Human-Level Performance on ImageNet Classification",
              year=2015, arxiv="1502.01852")

TASK = "digits_classify"  # a task installed by zoo-task-digits: `zoo list --task digits_classify`
CLAIM = ("Without normalization, a two-layer ReLU MLP with He initialization is as accurate on digits_classify as "
         "the task's LayerNorm MLP baseline (mlp-ln-relu) at matched parameters: its test accuracy is at most one "
         "point below the baseline's (5 seeds, paired)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            name="example_mlp", builder="zoo_example.model:example_mlp", task=TASK, paper=PAPER,
            description="two-layer MLP 64 -> hidden -> 10, ReLU, no normalization; He-normal hidden layer, "
                        "zero biases and a zero output layer",
            weights={"digits": WeightsSpec(
                repo="zoo-models/example-mlp-digits", recipe="zoo_example.train:digits",
                description="example_mlp trained on digits_classify's training split (zoo_example.train:digits, "
                            "the task's 600 steps, seed 0)")},
        ),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="example", claim=CLAIM, reproduce="zoo_example.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=10.0)]
