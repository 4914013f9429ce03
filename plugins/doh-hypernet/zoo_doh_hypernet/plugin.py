"""zoo hooks for D'OH: the decoder-only random hypernetwork and its claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="D'OH: Decoder-Only Random Hypernetworks for Implicit Neural Representations", year=2024,
              arxiv="2403.19163", catalog=85)
TASK = "signal_set_fit"
CLAIM = ("The memory footprint of an implicit neural representation can be varied through the latent dimension "
         "alone, without architecture search or offline data: D'OH's PSNR on held-out 25x25 faces rises "
         "monotonically with the bytes stored per signal (latent sizes 64..1024, same target SIREN), and at equal "
         "bytes per signal it is at least as good as a SIREN trained directly (the paper's hypothesis: additional "
         "compression from cross-layer redundancy)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="doh_siren", builder="zoo_doh_hypernet.model:doh_siren", task=TASK, paper=PAPER,
        description="D'OH: a per-signal latent (256-d) mapped by fixed seeded random projections, scaled per layer, "
                    "to all weights of a 3x32 SIREN; only the latent is optimised (300 Adam steps, lr 1e-2)",
        weights={"digits": WeightsSpec(
            repo="zoo-models/doh-siren-digits", recipe="zoo_doh_hypernet.train:digits",
            description="doh_siren on 16x16 digits (signal_set_fit): nothing shared is trained, the weights are "
                        "the seeded projections; 300 latent steps per signal, seed 0")})]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="doh-hypernet", claim=CLAIM, reproduce="zoo_doh_hypernet.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
