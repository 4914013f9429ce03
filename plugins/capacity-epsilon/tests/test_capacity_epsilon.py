"""capacity-epsilon: conformance, the known answers (Gaussian cosines have std 1/sqrt(d), orthonormal rows give eps 0,
the adjusted formula is JL times d), the packing's guarantees, validation, and the tools via zoo analyze."""
from __future__ import annotations

import math

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_capacity_epsilon.capacity import capacity, epsilon_estimate, greedy_packing, pairwise_cosines


def test_conformance(hub):
    check_plugin("capacity-epsilon")


@pytest.mark.parametrize("d", [16, 64, 256])
def test_gaussian_cosines_have_std_one_over_sqrt_d(d):
    est = epsilon_estimate(np.random.default_rng(d).standard_normal((200, d)))
    assert est["sigma"] * math.sqrt(d) == pytest.approx(1.0, abs=0.06)
    assert est["std"] * math.sqrt(d) == pytest.approx(1.0, abs=0.06)
    # epsilon is the largest incidental cosine: about the largest |cosine| the pairs show, and no pair "meaningful"
    # (at small d the cosines' tails are lighter than the Gaussian null's, so only from d = 64)
    assert d < 64 or est["eps"] == pytest.approx(est["max_abs_cos"], rel=0.2) and est["meaningful_fraction"] < 0.002


def test_orthonormal_rows_give_eps_zero():
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((32, 32)))
    est = epsilon_estimate(q[:20] * 3.0)
    assert est["eps"] == pytest.approx(0.0, abs=1e-9) and est["max_abs_cos"] < 1e-9


def test_planted_related_pairs_are_meaningful_not_incidental():
    rng = np.random.default_rng(1)
    e = rng.standard_normal((100, 64))
    e[50:60] = e[:10] + 0.3 * rng.standard_normal((10, 64))  # ten planted near-duplicates
    est = epsilon_estimate(e)
    cos = pairwise_cosines(e)
    assert (cos > est["eps"]).sum() >= 10 and est["eps"] < 0.6


def test_capacity_formulas():
    cap = capacity(64, 0.5, k=1000)
    assert cap["log_jl"] == pytest.approx(64 * 0.25 / 4) and cap["adjusted"] == pytest.approx(64 * cap["jl"])
    # exponential sensitivity to eps: log capacity is quadratic in eps
    assert capacity(64, 0.4)["log_jl"] / capacity(64, 0.2)["log_jl"] == pytest.approx(4.0)
    assert cap["dim_needed_jl"] == pytest.approx(4 * math.log(1000) / 0.25)
    assert cap["dim_needed_adjusted"] == pytest.approx(4 * math.log(1000 / 64) / 0.25)
    with pytest.raises(ValueError, match="0 < eps <= 1"):
        capacity(64, 0.0)


def test_packing_is_valid_and_beats_jl():
    k = greedy_packing(16, 0.5, seed=0)
    assert k > 16 > capacity(16, 0.5)["jl"]  # at least the orthonormal basis; JL says under 3
    assert greedy_packing(8, 0.05, seed=0) == 8  # tiny eps: only the orthonormal basis fits


def test_validation_names_the_requirement():
    with pytest.raises(ValueError, match="at least 3 vectors"):
        epsilon_estimate(np.ones((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        epsilon_estimate(np.array([[1.0, 0], [0, 1], [np.nan, 1]]))
    with pytest.raises(ValueError, match="all-zero rows"):
        epsilon_estimate(np.array([[1.0, 0], [0, 1], [0, 0]]))
    with pytest.raises(ValueError, match="at least 3"):
        zoo.analyze("epsilon-estimate", {"E": np.ones((2, 4))})


def test_tools_on_raw_arrays_and_through_a_model(tmp_path):
    e = np.random.default_rng(2).standard_normal((80, 32))
    res = zoo.analyze("epsilon-estimate", {"E": e}, out_dir=str(tmp_path))
    assert res["layers"]["E"]["eps"] == pytest.approx(epsilon_estimate(e)["eps"], rel=1e-5)
    assert (tmp_path / "cosine_distribution.png").exists()
    cap = zoo.analyze("capacity", {"E": e})["layers"]["E"]
    assert cap["adjusted"] == pytest.approx(32 * cap["jl"], rel=1e-6)
    from zoo_task_digits.task import probe_data

    x, _ = probe_data(40)
    model = zoo.create("gelu_mlp_digits")
    out = zoo.analyze("epsilon-estimate", model, inputs=x, layers=["output"])
    assert 0 < out["layers"]["output"]["eps"] and out["layers"]["output"]["pairs"] == 40 * 39 // 2


def test_quick_reproduction_adjusted_beats_jl():
    from zoo.claims import run_claim
    from zoo_capacity_epsilon.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    assert rows["packing"]["adjusted_log_error"]["mean"] < rows["packing"]["jl_log_error"]["mean"]
    assert rows["embeddings"]["gauss_std_ratio"]["mean"] == pytest.approx(1.0, abs=0.1)
