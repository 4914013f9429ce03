"""zoo hooks for pointer-net: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Pointer Networks", year=2015, arxiv="1506.03134", catalog=111)
TASK = "algorithmic_seq"

CLAIM = ("A Pointer Network (LSTM encoder-decoder whose content attention over the inputs is the output distribution) "
         "beats the sequence-to-sequence model with input attention (fixed output classes) at matched parameters and "
         "equal steps on planar convex hull, sorting and TSP, and generalises beyond the maximum training length: "
         "trained on 5-10 points it keeps non-trivial hull area coverage at 15 and 20 points, where seq2seq cannot "
         "name the positions")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="pointer_net", builder="zoo_pointer_net.model:pointer_net", task=TASK, paper=PAPER,
                  description="Ptr-Net: LSTM encoder, LSTM decoder fed the previously chosen point, attention "
                              "u_j = v^T tanh(W1 e_j + W2 d_i) over the inputs and a learned END key as the output "
                              "distribution; U[-0.08, 0.08] init; CPU default 64 units, preset='paper' for 512; "
                              "in_dim=1 for sort; decode(points, max_len, beam=K) for beam search"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="pointer-net", claim=CLAIM, reproduce="zoo_pointer_net.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
