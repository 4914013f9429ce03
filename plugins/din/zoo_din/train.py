"""Recipe for the pretrained tag: ``zoo train din.movielens`` runs ``movielens(seed=0)``.

DIN (CPU default) trained by tabular_ctr's ctr protocol on MovieLens-100k (click = rating >= 4; each user's last 20
behaviours as history; each user's later impressions held out; Adam lr 1e-3, batches of 256, the dataset's 2 epochs),
and its test AUC, GAUC and logloss next to the sum-pooling Embedding&MLP base model at matched parameters, trained
the same way on the same split and seed. The tag's item ids are ``ctr_data("movielens")``'s.
"""
from __future__ import annotations

import torch

import zoo
from zoo.task import count_params, torch_threads

DATASET = "movielens"


def movielens(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """See the module docstring; about a minute of CPU.

    >>> model, metrics = movielens(seed=0)  # doctest: +SKIP
    """
    from zoo_task_tabular_ctr import ctr_mode as C
    from zoo_task_tabular_ctr.ctr_data import ctr_data

    with torch_threads(1):
        d = ctr_data(DATASET)
        torch.manual_seed(seed)
        model = zoo.create("din", **d.info())
        m = C.run_ctr(model, d, seed=seed)
        base = C.run_ctr(C.build_ctr_baseline("sum_pooling", DATASET, params=count_params(model), seed=seed), d,
                         seed=seed)
    keep = ("auc", "gauc", "logloss", "params")
    return model.eval(), {**{k: float(m[k]) for k in keep}, **{f"sum_pooling_{k}": float(base[k]) for k in keep}}
