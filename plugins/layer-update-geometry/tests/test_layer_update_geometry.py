"""layer-update-geometry: conformance, known answers (an update that is exactly a tokenwise linear map leaves residual
0 and alignment 1; a purely cross-token update is not tokenwise), Spearman, validation, the tool via zoo.analyze and
`zoo analyze`, the perturbation test on a tiny model."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import zoo
from zoo.cli import main as cli_main
from zoo.testing import check_plugin
from zoo_layer_update_geometry.geometry import fit_tokenwise, perturbation_spearman, spearman, update_geometry


def test_conformance(hub):
    check_plugin("layer-update-geometry")


def test_an_exactly_tokenwise_linear_update_leaves_no_residual():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((20, 8, 6))
    w, b = rng.standard_normal((6, 6)), rng.standard_normal(6)
    out = update_geometry(h, h + h @ w + b, fit="linear", ridge=1e-12)
    assert out["resid_energy"] == pytest.approx(0.0, abs=1e-12)
    assert out["align_full"] == pytest.approx(1.0, abs=1e-9) and out["angle_full"] == pytest.approx(0.0, abs=1e-3)


def test_a_cross_token_update_is_not_tokenwise():
    # dh_t = h of ANOTHER token (the previous one): no function of h_t predicts it, so the residual carries it all
    rng = np.random.default_rng(1)
    h = rng.standard_normal((40, 10, 5))
    dh = np.roll(h, 1, axis=1)
    out = update_geometry(h, h + dh, fit="linear")
    assert out["resid_energy"] > 0.9 and out["align_resid"] > 0.9 and abs(out["align_full"]) < 0.3


def test_mlp_fits_a_nonlinear_tokenwise_update_that_linear_cannot():
    rng = np.random.default_rng(2)
    h = rng.standard_normal((40, 8, 3))
    dh = np.tanh(2 * h[..., ::-1]) ** 2
    lin = update_geometry(h, h + dh, fit="linear")
    mlp = update_geometry(h, h + dh, fit="mlp", steps=400, lr=2e-2)
    assert mlp["resid_energy"] < 0.5 * lin["resid_energy"] and mlp["align_full"] > 0.95


def test_spearman_known_answers():
    assert spearman([1, 2, 3, 4], [10, 20, 25, 100]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_validation_errors_name_the_requirement():
    x = np.ones((4, 3, 2))
    with pytest.raises(ValueError, match="same shape"):
        update_geometry(x, np.ones((4, 3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        update_geometry(x, np.full_like(x, np.nan))
    with pytest.raises(ValueError, match="choose from"):
        fit_tokenwise(np.ones((5, 2)), np.ones((5, 2)), fit="kernel")
    with pytest.raises(ValueError, match="at least 2 layers"):
        zoo.analyze("layer-update-geometry", {"a": x})
    with pytest.raises(ValueError, match="same width"):
        zoo.analyze("layer-update-geometry", {"a": x, "b": np.ones((4, 3, 3))})
    with pytest.raises(ValueError, match=r"k \(the tokenwise"):
        update_geometry(x, x, k=9)


def test_tool_on_raw_arrays(tmp_path):
    rng = np.random.default_rng(3)
    h0 = rng.standard_normal((16, 6, 4))
    h1 = h0 + np.tanh(h0 @ rng.standard_normal((4, 4)))
    h2 = h1 + 0.1 * h1.mean(1, keepdims=True)
    out = zoo.analyze("layer-update-geometry", {"h0": h0, "h1": h1, "h2": h2}, fit="linear", out_dir=str(tmp_path))
    assert list(out["pairs"]) == ["h0->h1", "h1->h2"] and 0 <= out["mean"]["resid_energy"]
    assert out["artifacts"]["geometry"].endswith(".png")


def test_zoo_analyze_on_an_installed_model(capsys):
    assert cli_main(["analyze", "layer-update-geometry", "rmsnorm_vit", "--n", "20", "--layers",
                     "blocks.0,blocks.1,blocks.2"]) == 0
    data = json.loads(capsys.readouterr().out)["result"]
    assert list(data["pairs"]) == ["blocks.0->blocks.1", "blocks.1->blocks.2"]
    assert all(-1.0 <= p["align_full"] <= 1.0 for p in data["pairs"].values())


def test_perturbation_spearman_on_a_tiny_model():
    from zoo_ssm_vs_transformer_propagation.models import build, sample_ids

    model = build("ssm", 0, dim=16, depth=2, block_size=16).eval()
    r = perturbation_spearman(model, sample_ids(2, 16, seed=1), 1, fit="linear", fit_ids=sample_ids(8, 16, seed=2))
    assert r["tokens"] == 32 and -1.0 <= r["spearman"] <= 1.0 and math.isfinite(r["change_mean"])
    assert r["change_mean"] >= 0.0  # a KL
