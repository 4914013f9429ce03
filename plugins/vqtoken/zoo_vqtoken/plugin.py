"""zoo hooks for vqtoken: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="VQToken: Neural Discrete Token Representation Learning for Extreme Token Reduction in Video Large "
                    "Language Models", year=2025, arxiv="2503.16980", catalog=2)

CLAIM = ("Extreme token reduction with a small accuracy drop (the paper: 0.07% of the tokens for a 0.66-point drop on "
         "NextQA-MC); small-scale adaptation on video_tokens: adaptive VQToken keeps under 5% of the 288 tokens of each "
         "video, the task's classifier loses at most 5 accuracy points against full tokens, and at least 5 points less "
         "than with random pruning at the same token budget")

_TASK = "video_tokens"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="vqtoken", builder="zoo_vqtoken.model:vqtoken", task=_TASK, paper=PAPER,
                  description="adaptive vector quantisation (cosine k-means, K per video by the elbow of the distortion "
                              "curve, or a fixed K) + token hash (t, h, w) -> codebook index; preset cpu/paper"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="vqtoken", claim=CLAIM, reproduce="zoo_vqtoken.reproduce:REPRODUCTION", task=_TASK,
                      paper=PAPER)]
