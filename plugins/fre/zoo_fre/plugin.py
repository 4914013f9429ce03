"""zoo hooks for fre: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Unsupervised Zero-Shot Reinforcement Learning via Functional Reward Encodings", year=2024,
              arxiv="2402.17135", url="https://arxiv.org/abs/2402.17135", code="https://github.com/kvfrans/fre",
              catalog=17)
TASK = "control_toy"

CLAIM = ("An agent pretrained offline on diverse random unsupervised reward functions (goal-reaching, linear, "
         "random-MLP) through a functional reward encoding solves new tasks zero-shot from 32 reward-labelled samples: "
         "on control_toy's 8x8 gridworld its normalised return on held-out goal and linear rewards is above a "
         "goal-conditioned agent's (matched parameters, equal steps, goal = best sample) and above a random policy's")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="fre", builder="zoo_fre.model:fre", task=TASK, paper=PAPER,
                  description="FRE: permutation-invariant transformer VAE over (state, reward-bin) tokens -> z, "
                              "decoder r(s') from (z, s'), pretrained offline on goal/linear/random-MLP rewards; "
                              "CPU agent: value iteration on the decoded reward; agent='iql' (preset='paper') the "
                              "paper's z-conditioned IQL; encode(states, rewards) -> z, policy(s, z) -> logits",
                  weights={"gridworld": WeightsSpec(
                      repo="zoo-models/fre-gridworld",
                      snapshot="zoo_fre:weights/fre.gridworld",
                      files={"config.json": "4730a3460dcaf63db2cddb01375c9b1b1f055df9bc8177f08f3ba44499b7711a",
                             "model.safetensors": "29cb14e23e06ab5436987c73b56d8c3d32197f88abdff87562ec92f5e0bc42a7"},
                      recipe="zoo_fre.train:gridworld",
                      description="fre (CPU defaults) pretrained for 3,000 steps on control_toy's seed-0 offline "
                                  "gridworld data and reward prior (zoo_fre.train:gridworld); evaluate it zero-shot "
                                  "with zoo.evaluate(model, task='control_toy', mode='gridworld')")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="fre", claim=CLAIM, reproduce="zoo_fre.reproduce:REPRODUCTION", task=TASK, paper=PAPER)]
