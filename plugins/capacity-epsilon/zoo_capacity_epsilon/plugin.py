"""zoo hooks for capacity-epsilon: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Representational Capacity: Geometric Limits on Feature Representation in Transformer Language "
                    "Models", year=2026, arxiv="2606.02765", url="https://arxiv.org/abs/2606.02765", catalog=96)

CLAIM = ("Plain Johnson-Lindenstrauss greatly underestimates how many near-orthogonal directions can be packed in d "
         "dimensions, and the k/d-adjusted capacity formula cuts its prediction error severalfold: measured greedy "
         "packings of eps-orthogonal unit vectors (d = 8 to 32, eps = 0.3 to 0.5) against both formulas; epsilon is "
         "estimated from the pairwise cosine distribution of the glyph_gpt.stdlib embedding and of Gaussian ones")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="epsilon-estimate", function="zoo_capacity_epsilon.tool:epsilon_tool", paper=PAPER,
                     inputs="one or more layers, each (N >= 3, d): N vectors (embedding rows, or activations over N "
                            "inputs; tokens mean-pooled); layers= chooses",
                     outputs="layers: {name: {eps, center, sigma, random_sigma (1/sqrt d), mean, std, z, pairs, "
                             "meaningful_fraction, max_abs_cos}}; a cosine-histogram PNG with out_dir",
                     description="orthogonality tolerance epsilon from the pairwise cosine distribution (robust "
                                 "Gaussian null: the largest incidental |cosine| among the pairs)"),
            ToolSpec(name="capacity", function="zoo_capacity_epsilon.tool:capacity_tool", paper=PAPER,
                     inputs="one or more layers, each (N >= 3, d); eps= overrides the measured epsilon, c= the JL "
                            "constant (4)",
                     outputs="layers: {name: {eps, eps_measured, near_orthogonal, jl, adjusted, log_jl, "
                             "log_adjusted, dim_needed_jl, dim_needed_adjusted}}",
                     description="plain-JL capacity exp(d eps^2 / c) and the k/d-adjusted d exp(d eps^2 / c) at the "
                                 "layer's epsilon and d")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="capacity-epsilon", claim=CLAIM, reproduce="zoo_capacity_epsilon.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
