"""zoo hooks for oc-gvf: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Discovering Object-Centric Generalized Value Functions From Pixels", year=2023, arxiv="2304.13892",
              catalog=43)
TASK = "control_toy"

CLAIM = ("Object-centric GVFs (per-object question functions whose general value functions, learned by TD, feed the "
         "policy) are competitive with a pixel DQN in a stationary and a reward-switching pixel gridworld, and adapt "
         "faster after the switch because the object-centred GVFs stay valid across tasks")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="oc_gvf", builder="zoo_oc_gvf.model:oc_gvf", task=TASK, paper=PAPER,
                  description="object-centric GVF agent for control_toy's pixels mode: colour-mask slots (object "
                              "offset from the agent), contact question functions c_k, one shared GVF head per slot "
                              "learned by Q-learning on c_k (MSTDE), a linear policy on the GVFs learned by TD on the "
                              "reward; gvf(frames) -> (B, K*5), policy(gvf) -> (B, 5)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="oc-gvf", claim=CLAIM, reproduce="zoo_oc_gvf.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER)]
