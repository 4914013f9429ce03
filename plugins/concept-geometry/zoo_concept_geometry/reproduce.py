"""``zoo reproduce concept-geometry``: the three scales on the icl_toy token GPT (``experiment``), 3 seeds.

Per seed s: ``crystal_experiment`` (LDA fitted on 8 fit words, quality on quadruples of the 8 held-out words, 2000
quadruples; rows ``crystal_lda``, ``crystal_raw``, ``crystal_random``) and ``universe_experiment`` (an SAE per
residual layer 0..4 trained with seed s on 1200 prompts; row ``lobes`` with the mean AMI over layers 1..4,
``lobes_shuffled`` with the shuffled-position AMI, row ``galaxy`` with the per-layer slopes and clustering
entropies, reported without a check).
"""
from __future__ import annotations

from functools import cache

from zoo.claims import Check, Claim, Row

from .plugin import CLAIM

LDA_MARGIN, AMI_MARGIN = 0.05, 0.03


def _gpt():
    from zoo_task_icl_toy.models import trained_gpt

    return trained_gpt("token")


@cache
def _crystal(seed: int, quick: bool) -> dict[str, float]:
    import torch

    from zoo.task import torch_threads

    from .experiment import crystal_experiment

    with torch_threads(1), torch.no_grad():
        return crystal_experiment(_gpt(), seed=seed, n_per=3 if quick else 6, n_quads=300 if quick else 2000)


@cache
def _universe(seed: int, quick: bool) -> dict[str, float]:
    from zoo.task import torch_threads

    from .experiment import universe_experiment

    with torch_threads(1):
        return universe_experiment(_gpt(), seed=seed, n_per_task=20 if quick else 150, steps=60 if quick else 1000,
                                   n_shuffles=2 if quick else 10)


def _crystal_row(kind: str):
    def row(*, seed: int, quick: bool) -> dict[str, float]:
        r = _crystal(seed, quick)
        out = {"parallelogram": r[f"{kind}_parallelogram"], "trapezoid": r[f"{kind}_trapezoid"]}
        if kind == "raw":
            out.update({k: v for k, v in r.items() if k.startswith("fit_") or k.endswith("_chosen")})
        return out
    return row


def lobes(*, seed: int, quick: bool) -> dict[str, float]:
    r = _universe(seed, quick)
    return {k: v for k, v in r.items() if k.startswith(("ami", "fve", "l0", "alive")) and "shuffled" not in k}


def lobes_shuffled(*, seed: int, quick: bool) -> dict[str, float]:
    r = _universe(seed, quick)
    return {"ami": r["ami_shuffled"], **{k: v for k, v in r.items() if k.startswith("ami_shuffled_")}}


def galaxy(*, seed: int, quick: bool) -> dict[str, float]:
    r = _universe(seed, quick)
    return {k: v for k, v in r.items() if k.startswith(("slope", "raw_slope", "clustering_entropy", "steepest"))}


REPRODUCTION = Claim(
    plugin="concept-geometry", claim=CLAIM, task=None, seeds=(0, 1, 2), quick_seeds=(0,),
    rows=[Row("crystal_lda", _crystal_row("lda")), Row("crystal_raw", _crystal_row("raw")),
          Row("crystal_random", _crystal_row("random")), Row("lobes", lobes), Row("lobes_shuffled", lobes_shuffled),
          Row("galaxy", galaxy)],
    checks=[Check("crystal_lda", "parallelogram", "crystal_raw", margin=LDA_MARGIN),
            Check("crystal_lda", "parallelogram", "crystal_random", margin=LDA_MARGIN),
            Check("lobes", "ami", "lobes_shuffled", margin=AMI_MARGIN)],
    settings={"model": "icl_toy trained_gpt('token') (dim 64, 4 blocks)", "crystal_points": "query-token residual of "
              "8-shot prompts of the 4 word tasks x 16 query words x 6 prompts", "lda_k": 8, "lda_reg": 0.01,
              "crystal_layers": "of 1..4, those whose fit-word raw trapezoid quality > 0.5 (task vector present)",
              "sae": "256 features, ReLU, L1 1.0 on inputs scaled to mean squared norm D, unit-norm decoder rows, "
                     "Adam 1e-3, batch 256, 1000 steps", "sae_prompts": "150 per token task (1200), window = prompt",
              "n_clusters": 8, "shuffles": 10, "power_law_fit": "ranks 1..D/2", "entropy": "kNN (k=5) on top-10 PCs"},
    notes=f"margins fixed before the recorded run: LDA raises the held-out parallelogram quality by >= {LDA_MARGIN:g} "
          f"over the raw space and over a random 8-dim projection; the co-occurrence/geometry AMI exceeds the "
          f"shuffled-position AMI by >= {AMI_MARGIN:g}. Honest disclosure: while building it this session ran the "
          "experiments on seeds 5 and 9 (and once seed 0 on the answer position, where no task parallelogram exists: "
          "trapezoid ~0 at every layer, so the query position was chosen); the layer rule (fit-word trapezoid > 0.5) "
          "and margins were set after those runs and before seeds 0-2 were recorded. The galaxy row has no check: "
          "its per-layer slope profile is reported as measured.",
)
