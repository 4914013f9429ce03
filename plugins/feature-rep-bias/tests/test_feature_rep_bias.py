"""feature-rep-bias: the conformance kit, the variance share's known answers, the generator, zoo analyze end to end."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zoo
from zoo.cli import main as cli_main
from zoo.testing import check_plugin
from zoo_feature_rep_bias.variance import make_features, pca_shares, variance_share


def test_conformance(hub):
    check_plugin("feature-rep-bias")


def test_a_representation_that_is_the_feature_gives_share_1_and_an_unrelated_one_about_0():
    x, y = make_features(2000, ("linear", "xor4"), seed=0)
    rep = np.outer(y[:, 0], [2.0, -1.0, 0.5]) + 3.0  # an affine image of the linear feature
    assert variance_share(rep, y[:, 0]) == pytest.approx(1.0)
    assert variance_share(rep, y[:, 1]) == pytest.approx(0.0, abs=5e-3)  # independent feature


def test_the_share_is_the_fraction_of_variance_in_the_feature_direction():
    # unit 0 = feature (variance 1 after +-1 coding) + noise of variance 1 in unit 1: the feature explains 1/2
    rng = np.random.default_rng(0)
    f = rng.choice([-1.0, 1.0], 20_000)
    rep = np.stack([f, rng.standard_normal(20_000)], 1)
    assert variance_share(rep, f) == pytest.approx(0.5, abs=0.02)
    top = pca_shares(rep, {"f": f}, 2)
    assert len(top) == 2 and sum(p["variance_share"] for p in top) == pytest.approx(1.0)


def test_a_linear_read_out_sees_xor_but_not_its_bits_and_the_generator_is_balanced():
    x, y = make_features(4000, ("linear", "xor4"), seed=1)
    assert set(np.unique(x)) == {-1.0, 1.0} and abs(y.mean(0) - 0.5).max() < 0.05
    # the majority is linear in its 5 bits (each bit correlates with it); the parity has no linear read-out at all
    assert variance_share(x[:, :5], y[:, 0]) == pytest.approx(5 * 0.375 ** 2 / 5 * 1.0, abs=0.02)  # r = 6/16 per bit
    assert variance_share(x[:, 5:9], y[:, 1]) < 0.01 and variance_share(x[:, :5], y[:, 1]) < 0.01


def test_validation_names_the_requirement():
    with pytest.raises(ValueError, match="constant"):
        variance_share(np.ones((10, 3)), np.arange(10))
    with pytest.raises(ValueError, match="needs features"):
        zoo.analyze("feature_variance_explained", np.random.default_rng(0).standard_normal((10, 3)))
    with pytest.raises(ValueError, match="NaN"):
        zoo.analyze("feature_variance_explained", np.full((10, 3), np.nan), labels=np.arange(10) % 2)
    with pytest.raises(ValueError, match="at least 3"):
        zoo.analyze("feature_variance_explained", np.ones((2, 3)), labels=np.arange(2))
    with pytest.raises(ValueError, match="disjoint input bits"):
        make_features(10, ("xor4",) * 9)


def test_python_api_on_arrays_with_concepts_and_a_png(tmp_path):
    _, y = make_features(500, ("linear", "xor4"), seed=2)
    rng = np.random.default_rng(0)
    acts = zoo.ActivationSet({"simple": np.outer(y[:, 0], np.ones(6)) + 0.1 * rng.standard_normal((500, 6))},
                             concepts={"lin": y[:, 0], "xor": y[:, 1]})
    out = zoo.analyze("feature_variance_explained", acts, out_dir=str(tmp_path))
    share = out["layers"]["simple"]["share"]
    assert share["lin"] > 0.9 and share["xor"] < 0.02
    assert out["layers"]["simple"]["pca"][0]["r2"]["lin"] > 0.95
    assert os.path.isfile(out["artifacts"]["shares"])


def test_zoo_analyze_on_an_installed_digits_model(tmp_path, capsys):
    # `zoo analyze TOOL MODEL` in process (the CLI's main), on the digits task's probe data
    assert cli_main(["analyze", "feature_variance_explained", "gelu_mlp_digits", "--n", "60", "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)["result"]
    assert data["features"] == ["labels"] and os.path.isfile(data["artifacts"]["shares"])
    for layer in data["layers"].values():
        assert 0.0 <= layer["share"]["labels"] <= 1.0 + 1e-9
