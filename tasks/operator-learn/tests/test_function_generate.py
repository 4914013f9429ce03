"""The function_generate task: protocol, metrics on a known model, errors (issue 16)."""
import math

import pytest
import torch

from zoo_task_operator_learn import function_generate as fg
from zoo_task_operator_learn.baselines import GPBaseline

FAST = {"n_train": 40, "train_points": 16, "n_test": 200, "test_points": 24, "n_cond": 3}


def _fixed_gp(lengthscale: float) -> GPBaseline:
    gp = GPBaseline("rbf")
    gp.log_params.copy_(torch.tensor([0.0, math.log(lengthscale), math.log(1e-8)], dtype=torch.float64))
    return gp


def test_the_true_process_scores_near_zero_and_a_wrong_one_does_not():
    right = fg.evaluate(_fixed_gp(0.2), process="rbf", train_model=False, baselines=[], **FAST).metrics
    wrong = fg.evaluate(_fixed_gp(0.05), process="rbf", train_model=False, baselines=[], **FAST).metrics
    assert right["cov_error"] < 0.2 < wrong["cov_error"]
    assert right["energy_distance"] < 0.01 < wrong["energy_distance"]
    assert right["cond_mean_error"] < 0.2 < wrong["cond_mean_error"]  # the exact posterior vs a wrong one
    assert {"mean_error_train_dist", "marginal_ks", "cond_cov_error"} <= set(right)


def test_gp_baseline_is_fitted_on_the_training_functions():
    r = fg.evaluate(_fixed_gp(0.05), process="matern", train_model=False, **FAST)
    gp = r.baselines["gp"]
    assert gp["lengthscale"] == pytest.approx(0.2, rel=0.3) and gp["cov_error"] < r.metrics["cov_error"]
    assert "cond_mean_error" in gp and r.config["test_dist"] == "skewed"


def test_nongauss_has_no_conditional_rows_and_errors_are_clear():
    r = fg.evaluate(_fixed_gp(0.2), process="nongauss", train_model=False, baselines=[], **FAST)
    assert "cond_mean_error" not in r.metrics and r.metrics["marginal_ks"] > 0
    with pytest.raises(ValueError, match="unknown process 'brownian'"):
        fg.evaluate(_fixed_gp(0.2), process="brownian")
    with pytest.raises(ValueError, match="needs fit.*no fit"):
        fg.evaluate(torch.nn.Linear(1, 1), process="rbf", **FAST)
    assert fg.describe(process="matern")["process"] == "matern"


def test_two_dimensional_points():
    r = fg.evaluate(_fixed_gp(0.2), process="matern", dim=2, train_model=False, baselines=[], **FAST)
    assert r.config["dim"] == 2 and r.metrics["cov_error"] < 1.0 and "cond_mean_error" in r.metrics
