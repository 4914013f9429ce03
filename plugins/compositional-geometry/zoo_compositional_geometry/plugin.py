"""zoo hooks for compositional-geometry: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Compositional Generalization Requires Linear, Orthogonal Representations in Vision Embedding "
                    "Models", year=2026, arxiv="2602.24264", url="https://arxiv.org/abs/2602.24264",
              code="https://github.com/oshapio/necessary-compositionality", catalog=42)

CLAIM = ("Representations show partial linear factorisation with low-rank, near-orthogonal per-concept factors, and "
         "the degree of this structure correlates with compositional generalisation: ShapesCNN encoders trained for "
         "different numbers of steps on synthetic shape x colour x position images with 2 (shape, colour) pairs held "
         "out; per seed, the Spearman correlation across the encoders between the linear-factorisation R^2 of their "
         "fc embedding and their accuracy on the held-out pairs")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="linear-factorization", function="zoo_compositional_geometry.tool:factorization_tool",
                     paper=PAPER,
                     inputs="one or more layers, each (N >= 4, D), with concept labels: labels (N, k), a concept "
                            "array (N, k), several named (N,) concepts (concepts= chooses and orders them), or single "
                            "labels split by sizes= (mixed radix, e.g. sizes=[2, 5]); every concept needs >= 2 values",
                     outputs="layers: {name: {r2, r2_whitened, r2_lstsq, k95 (per concept), max_rank, same_abs_cos, "
                             "cross_abs_cos, principal_angles {i-j: degrees}, min_angle, mean_angle}}; a PNG of the "
                             "factor spectra with out_dir",
                     description="Uselis et al.'s linear-factorisation R^2 (sum of per-concept value means), "
                                 "per-concept factor rank (k95) and cross-concept orthogonality (|cos| of value "
                                 "means, principal angles between factor spans)")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="compositional-geometry", claim=CLAIM,
                      reproduce="zoo_compositional_geometry.reproduce:REPRODUCTION", task=None, paper=PAPER)]
