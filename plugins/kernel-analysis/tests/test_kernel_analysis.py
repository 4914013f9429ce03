"""kernel-analysis: conformance, the curve's known answers (labels on the first principal direction are read at d = 1;
exact leave-one-out), input validation, and the tool through zoo.analyze and `zoo analyze` on a digits model."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_kernel_analysis.kernel import kernel_analysis_curve, log_area, loo_curves


def test_conformance():
    check_plugin("kernel-analysis")


def _two_directions(seed=0, n=200):
    """Two bimodal directions: a wide one (x0, the first principal direction) and a narrow one (x1)."""
    rng = np.random.default_rng(seed)
    s, t = rng.choice([-1.0, 1.0], n), rng.choice([-1.0, 1.0], n)
    x = np.c_[4 * s + 0.3 * rng.standard_normal(n), 0.6 * t + 0.2 * rng.standard_normal(n), rng.standard_normal((n, 3))]
    return x, (s > 0).astype(int), (t > 0).astype(int)


def test_labels_on_the_first_principal_direction_need_one_component():
    x, on_first, on_narrow = _two_directions()
    first = kernel_analysis_curve(x, on_first, d_max=10)
    narrow = kernel_analysis_curve(x, on_narrow, d_max=10)
    assert first["error"][0] <= 0.01 and first["area"] <= 0.01
    # the same data with labels on a low-variance direction: one component is chance, and the curve lies higher
    assert narrow["error"][0] >= 0.3 and narrow["area"] > first["area"] + 0.1


def test_leave_one_out_residuals_are_exact():
    rng = np.random.default_rng(1)
    n, d, c = 30, 4, 3
    u, _ = np.linalg.qr(rng.standard_normal((n, d)) - 0)
    u -= u.mean(0)  # kernel PCA components are orthogonal to the constant
    u, _ = np.linalg.qr(u)
    codes = rng.integers(0, c, n)
    error, squared = loo_curves(u, codes, c)
    y = np.eye(c)[codes]
    for k in (1, d):
        design = np.c_[np.ones(n), u[:, :k]]
        res, wrong = [], 0
        for i in range(n):  # refit without input i, predict it
            keep = np.arange(n) != i
            beta, *_ = np.linalg.lstsq(design[keep], y[keep], rcond=None)
            pred = design[i] @ beta
            res.append(((y[i] - pred) ** 2).sum())
            wrong += int(pred.argmax() != codes[i])
        assert squared[k - 1] == pytest.approx(np.mean(res), rel=1e-9) and error[k - 1] == pytest.approx(wrong / n)


def test_log_area_is_the_mean_over_log_d():
    assert log_area(np.full(50, 0.3)) == pytest.approx(0.3)
    # a curve that drops after d = 1 weighs d in [1, 2] as much as [10, 20]
    assert log_area(np.array([1.0, 0.0, 0.0, 0.0])) == pytest.approx(0.5 * np.log(2) / np.log(4))


@pytest.mark.parametrize(("x", "labels", "kw", "needle"), [
    (np.full((20, 3), np.nan), np.arange(20) % 2, {}, "NaN"),
    (np.ones((20, 3)), np.arange(19) % 2, {}, "one class label per input"),
    (np.random.default_rng(0).normal(size=(20, 3)), np.zeros(20), {}, "at least 2 classes"),
    (np.random.default_rng(0).normal(size=(6, 3)), np.arange(6) % 2, {}, "at least 10 inputs"),
    (np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2, {"d_max": 11}, "d_max <= N/2"),
    (np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2, {"loss": "hinge"}, "unknown loss"),
    (np.random.default_rng(0).normal(size=(20, 3)), None, {}, "needs labels"),
])
def test_inputs_are_validated(x, labels, kw, needle):
    with pytest.raises(ValueError, match=needle):
        kernel_analysis_curve(x, labels, **kw)


def test_tool_on_raw_arrays_ranks_layers_and_draws(tmp_path):
    x, on_first, _ = _two_directions(2, 120)
    noise = np.random.default_rng(3).standard_normal((120, 5))
    out = zoo.analyze("kernel_analysis", {"signal": x, "noise": noise}, labels=on_first, d_max=10, out_dir=str(tmp_path))
    assert out["best"] == "signal" and out["area"]["noise"] > out["area"]["signal"] + 0.2
    assert os.path.isfile(out["artifacts"]["curves"]) and len(out["layers"]["signal"]["curve"]) == 10
    with pytest.raises(ValueError, match="needs labels"):
        zoo.analyze("kernel_analysis", {"signal": x})


def test_zoo_analyze_on_a_digits_model(capsys):
    from zoo.cli import main

    if "gelu_mlp_digits" not in zoo.list_models():  # a digits model of the kan-fair plugin, installed with the repo
        pytest.skip("needs an installed digits model: pip install ./plugins/kan-fair")

    assert main(["analyze", "kernel_analysis", "gelu_mlp_digits", "--n", "40", "--layers", "features.2,head",
                 "--tool-arg", "d_max=8"]) == 0
    data = json.loads(capsys.readouterr().out)
    res = data["result"]
    assert data["n"] == 40 and set(res["area"]) == {"features.2", "head"} and res["d_max"] == 8
    assert all(0 <= v <= 1 for v in res["area"].values())
