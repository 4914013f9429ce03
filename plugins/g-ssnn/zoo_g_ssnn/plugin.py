"""zoo hooks for g-ssnn: specs only (no torch import).

The claim is registered as not measured (``ClaimSpec.not_measured``: registry.yaml says "partial" with ``STATUS``): it
rests on graphs found by program synthesis that cannot be reproduced here (see the README), and a claim measured on
hand-picked graphs would be a different claim.
"""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Symbolic Synthesis of Neural Networks", year=2023, arxiv="2303.03340",
              code="https://github.com/shlomenu/symbolically_synthesized_networks", catalog=68)

STATUS = ("partial: the G-SSNN module itself (vector chunks spread over a program-built graph, fixed sin-cos features "
          "of element order and port, GINE message passing, mean pool) is exact given a graph; the graphs are not: the "
          "paper finds them by distributional program search over a graph DSL with library learning (antireduce, "
          "antireduce-graphs, stitch; OCaml), whose DSL semantics changed across versions with the paper's version "
          "unpinned, and evaluates on RAVEN panels through a ViT encoder. No claim is measured.")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="g_ssnn", builder="zoo_g_ssnn.model:g_ssnn", task=None, paper=PAPER,
                  description="G-SSNN module over a given graph (edges=[((node, port), (edge_id, node)), ...]): "
                              "forward(x (B, dim)) -> (B, output_dim); the graph synthesis is not included"),
    ]


CLAIM = ("The choice of symbolic features injected into the neural module (through the synthesized graph) shifts data "
         "efficiency and generalisation in predictable patterns, both up and down")


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="g-ssnn", claim=CLAIM, paper=PAPER, not_measured=STATUS)]
