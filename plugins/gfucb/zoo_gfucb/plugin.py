"""zoo hooks for gfucb: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Provable General Function Class Representation Learning in Multitask Bandits and MDPs", year=2022,
              arxiv="2205.15701", url="https://arxiv.org/abs/2205.15701", catalog=5)
TASK = "control_toy"

CLAIM = ("Multitask representation learning with a general (neural) function class beats learning the tasks "
         "separately: on 10 contextual bandits sharing a nonlinear feature map (2,000 rounds), GFUCB's cumulative "
         "regret is lower than independent per-task LinUCB's and than single-task neural UCB's at matched parameters "
         "and equal training steps")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="gfucb", builder="zoo_gfucb.model:gfucb", task=TASK, paper=PAPER,
                  description="GFUCB: one ReLU MLP representation shared by M bandits with per-task linear heads, "
                              "fitted jointly (multihead least squares) every 20 rounds; optimism from the heads' "
                              "ridge confidence ellipsoid on the learned features (alpha ||phi(x)||_{V_i^-1}); "
                              "scores(contexts (M, K, d)) -> (M, K), update(contexts, actions, rewards)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="gfucb", claim=CLAIM, reproduce="zoo_gfucb.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER)]
