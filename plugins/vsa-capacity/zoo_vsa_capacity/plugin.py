"""zoo hooks for vsa-capacity: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Capacity Analysis of Vector Symbolic Architectures", year=2023, arxiv="2301.10352", catalog=34)

CLAIM = ("The dimension bounds for membership testing (MAP-I and MAP-B: d = O(|S| log(1/delta)); the Hopfield variant: "
         "d = O(sqrt(|S| log(1/delta))) with d^2 storage) and for intersection estimation (MAP-I as a sketch: "
         "d = O(eps^-2 log(1/delta))) are respected empirically: at the dimension the bound prescribes the measured "
         "error rate is at most the target delta = 0.01, and the bounds are not vacuous: at a quarter of that "
         "dimension the error rate exceeds the target (sparse binary / Bloom rows reported beside them)")

_TASK = "vsa_bench"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="vsa_map_i", builder="zoo_vsa_capacity.model:vsa_map_i", task=_TASK, paper=PAPER,
                  description="MAP-I set memory: integer sum of +-1 atoms, membership at <s, x> >= d/2; bound "
                              "d = 8 |S| ln(1/delta)"),
        ModelSpec(name="vsa_map_b", builder="zoo_vsa_capacity.model:vsa_map_b", task=_TASK, paper=PAPER,
                  description="MAP-B set memory: sign of the sum, membership at half the member correlation; bound "
                              "d = 8 ln(1/delta) / c_k^2"),
        ModelSpec(name="vsa_sparse_bloom", builder="zoo_vsa_capacity.model:vsa_sparse_bloom", task=_TASK, paper=PAPER,
                  description="sparse binary atoms (d ln2 / |S| ones) with OR bundling: a Bloom filter"),
        ModelSpec(name="vsa_sparse_counting", builder="zoo_vsa_capacity.model:vsa_sparse_counting", task=_TASK,
                  paper=PAPER, description="sparse binary atoms with integer-sum bundling: a counting Bloom filter"),
        ModelSpec(name="vsa_hopfield", builder="zoo_vsa_capacity.model:vsa_hopfield", task=_TASK, paper=PAPER,
                  description="Hopfield-network set memory W = sum x x^T, membership by the energy x^T W x"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="vsa-capacity", claim=CLAIM, reproduce="zoo_vsa_capacity.reproduce:REPRODUCTION",
                      task=_TASK, paper=PAPER)]
