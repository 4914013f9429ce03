"""pvr-influence: conformance, the known answers (dictator and parity influences, parity's noise stability rho^k),
the PVR functions, canonical holdout (the linear model's exact error, networks near 4 Inf_k), validation, and the tools
on raw arrays and through a digits model."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_pvr_influence.boolean import (
    PVR,
    boolean_influence,
    cube,
    fourier,
    holdout_prediction,
    linear_holdout_prediction,
    noise_stability,
)
from zoo_pvr_influence.holdout import canonical_holdout


def test_conformance(hub):
    check_plugin("pvr-influence")


def test_dictator_and_parity_influences():
    assert boolean_influence(lambda x: x[:, 2], 6).tolist() == [0, 0, 1, 0, 0, 0]
    parity = lambda x: x[:, 0] * x[:, 3] * x[:, 4]  # noqa: E731
    assert boolean_influence(parity, 6).tolist() == [1, 0, 0, 1, 1, 0]
    # majority of 3: flipping a bit matters when the other two disagree, half the time
    assert boolean_influence(lambda x: np.sign(x[:, :3].sum(1)), 5, 1) == pytest.approx(0.5)
    # Monte Carlo beyond the exact limit agrees on a 20-bit parity
    assert boolean_influence(lambda x: x[:, 0] * x[:, 19], 20, 19) == pytest.approx(1.0)
    assert boolean_influence(lambda x: x[:, 0] * x[:, 19], 20, 5) == pytest.approx(0.0)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_parity_noise_stability_is_rho_to_the_k(k):
    parity = lambda x: np.prod(x[:, :k], axis=1)  # noqa: E731
    for rho in (0.3, 0.9):
        assert noise_stability(parity, rho, 6) == pytest.approx(rho**k)
    assert noise_stability(parity, 0.5, 18, samples=40000) == pytest.approx(0.5**k, abs=0.02)


def test_fourier_and_stability_of_majority():
    maj = lambda x: np.sign(x[:, :3].sum(1))  # noqa: E731
    coef = fourier(maj, 3)
    assert coef[1] == pytest.approx(0.5) and coef[7] == pytest.approx(-0.5)  # 1/2 (x0 + x1 + x2) - 1/2 x0 x1 x2
    assert noise_stability(maj, 1.0, 3) == pytest.approx(1.0)


def test_pvr_points_to_its_window():
    pvr = PVR(pointer_bits=2, window=2, aggregation="parity")
    x = np.array([[1, -1, 1, 1, -1, -1.0]])  # pointer bits (0, 1) -> j = 2: value bits 2, 3 -> x[4] * x[5] = +1
    assert pvr(x)[0] == 1 and pvr.n == 6
    x[0, 5] = 1
    assert pvr(x)[0] == -1
    inf = boolean_influence(PVR(2, 3, "majority", extra=2), 8)
    assert inf[-2:].tolist() == [0, 0] and (inf[:6] > 0).all()
    with pytest.raises(ValueError, match="odd window"):
        PVR(2, 2, "majority")


def test_linear_holdout_error_is_the_influence_on_degree_one_targets():
    a = np.array([0.6, 0.5, 0.4, 0.3, 0.2, 0.3])
    lin = lambda x: x @ a  # noqa: E731
    res = canonical_holdout("linear", lin, 6, 0)
    assert res["test_mse"] == pytest.approx(a[0] ** 2, abs=1e-4) == res["influence"]
    # and the closed form for any target: majority of 3 (degree 3) under GD on w.x + b
    maj = lambda x: np.sign(x[:, :3].sum(1))  # noqa: E731
    assert canonical_holdout("linear", maj, 6, 0)["test_mse"] == pytest.approx(linear_holdout_prediction(maj, 6, 0), abs=1e-4)


def test_mlp_holdout_error_follows_the_frozen_bits_influence():
    hit = canonical_holdout("mlp", lambda x: x[:, 0], 6, 0, steps=150)
    miss = canonical_holdout("mlp", lambda x: x[:, 1], 6, 0, steps=150)
    assert hit["prediction"] == 4.0 and hit["test_mse"] > 2.5 and miss["test_mse"] < 0.5
    assert holdout_prediction(lambda x: x[:, 1], 6, 0) == 0.0


def test_tools_on_raw_arrays(tmp_path):
    pvr = PVR(2, 3, "majority", extra=2)
    x = cube(8)
    exact = zoo.analyze("boolean-influence", {"x": x, "y": pvr(x)}, out_dir=str(tmp_path))
    assert exact["method"] == "exact" and exact["influence"] == pytest.approx(boolean_influence(pvr, 8).tolist())
    assert (tmp_path / "boolean_influence.png").exists()
    rng = np.random.default_rng(0)
    sub = x[rng.random(len(x)) < 0.7]
    pairs = zoo.analyze("boolean-influence", {"x": sub, "y": pvr(sub)})
    assert pairs["method"] == "pairs" and pairs["influence"][6] == 0.0
    lin = zoo.analyze("boolean-influence", {"x": sub, "y": sub @ np.arange(8.0)}, method="fourier")
    assert lin["influence"] == pytest.approx(np.arange(8.0) ** 2, abs=1e-9)
    stab = zoo.analyze("noise-stability", {"x": x, "y": x[:, 0] * x[:, 1]}, rho=[0.5])
    assert stab["stability"]["0.5"] == pytest.approx(0.25) and stab["method"] == "exact"
    ho = zoo.analyze("canonical-holdout", {"x": cube(5), "y": cube(5)[:, 0]}, k=0, model="linear")
    assert ho["test_mse"] == pytest.approx(1.0, abs=1e-3) and ho["prediction"] == 4.0


def test_validation_names_the_requirement():
    x = cube(4)
    with pytest.raises(ValueError, match=r"\+-1 values"):
        zoo.analyze("boolean-influence", {"x": x * 2, "y": x[:, 0]})
    with pytest.raises(ValueError, match="needs layers 'x'"):
        zoo.analyze("boolean-influence", {"inputs": x, "y": x[:, 0]})
    with pytest.raises(ValueError, match="NaN"):
        zoo.analyze("boolean-influence", {"x": x, "y": np.where(x[:, 0] > 0, np.nan, 1.0)})
    with pytest.raises(ValueError, match="whole cube|every one of the 2"):
        zoo.analyze("canonical-holdout", {"x": x[:10], "y": x[:10, 0]})
    with pytest.raises(ValueError, match="needs more than that many inputs"):
        zoo.analyze("boolean-influence", {"x": x[:3], "y": x[:3, 0]}, method="fourier")


def test_influence_through_a_digits_model():
    from zoo_task_digits.task import probe_data

    images, _ = probe_data(120)
    out = zoo.analyze("boolean-influence", zoo.create("gelu_mlp_digits"), inputs=images,
                      layers=["features.0", "output"], x="features.0", y="output", unit=3, binarize=True)
    assert out["method"] == "fourier" and len(out["influence"]) == 64 and out["total_influence"] > 0
    assert out["influence"][0] == 0.0  # the corner pixel is always 0: constant, so no influence (not a share of the bias)


@pytest.mark.slow
def test_quick_reproduction_networks_track_the_influence():
    from zoo.claims import run_claim
    from zoo_pvr_influence.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    assert rows["linear"]["max_dev_influence_deg1"]["mean"] < 0.02
    assert rows["mlp"]["spearman"]["mean"] > rows["mlp"]["spearman_wrong_bit"]["mean"]
