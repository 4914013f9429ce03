"""sparse-probing: the conformance kit, planted-neuron known answers, input validation, zoo analyze end to end."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zoo
from zoo.cli import main as cli_main
from zoo.testing import check_plugin
from zoo_sparse_probing.probing import METHODS, binary_target, probe_layer


def test_conformance(hub):
    check_plugin("sparse-probing")


def _noise(n=300, d=24, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_a_planted_neuron_equal_to_the_label_is_found_at_k1_with_f1_1():
    x = _noise()
    y = (np.random.default_rng(1).random(300) < 0.4).astype(int)
    x[:, 13] = y
    res = probe_layer(x, y, ks=[1, 2, 4])
    for m in METHODS:
        assert res["neurons"][m][0] == 13 and res["f1"][m][0] == pytest.approx(1.0)


def test_a_feature_spread_over_four_neurons_needs_k_at_least_4():
    # y = [x3 + x7 + x11 + x19 > 0]: one neuron alone predicts it with ~2/3 accuracy; the four together exactly
    x = _noise(400)
    y = (x[:, [3, 7, 11, 19]].sum(1) > 0).astype(int)
    res = probe_layer(x, y, ks=[1, 2, 4, 8])
    for m in METHODS:
        f1 = res["f1"][m]
        assert sorted(res["neurons"][m][:4]) == [3, 7, 11, 19]
        assert f1[0] < 0.85 and f1[1] < 0.9 and f1[2] > 0.95  # k=1, 2 fall short; k=4 recovers it


def test_random_features_give_no_neuron_a_high_f1():
    x = _noise(seed=2)
    y = (np.random.default_rng(3).random(300) < 0.5).astype(int)
    assert max(probe_layer(x, y, ks=[1])["f1_at_1"].values()) < 0.75


def test_validation_names_the_requirement():
    with pytest.raises(ValueError, match="positive="):
        binary_target(np.arange(10) % 3)
    with pytest.raises(ValueError, match="at least 8 inputs of each class"):
        probe_layer(_noise(30), np.r_[np.ones(3), np.zeros(27)].astype(int))
    with pytest.raises(ValueError, match="NaN"):
        x = _noise(40)
        x[2, 1] = np.nan
        zoo.analyze("sparse_probe", x, labels=np.arange(40) % 2)
    with pytest.raises(ValueError, match="needs a binary feature"):
        zoo.analyze("sparse_probe", _noise(40))
    with pytest.raises(ValueError, match="k must lie in"):
        probe_layer(_noise(40, 4), np.arange(40) % 2, ks=[1, 8])


def test_python_api_on_arrays_with_a_concept_and_a_png(tmp_path):
    x = _noise(120, 8)
    acts = zoo.ActivationSet({"a": x, "b": -x}, concepts={"sign": (x[:, 5] > 0).astype(int)})
    out = zoo.analyze("sparse_probe", acts, feature="sign", methods=["mean_diff"], out_dir=str(tmp_path))
    assert out["layers"]["a"]["k"] == [1, 2, 4, 8] and out["layers"]["b"]["neurons"]["mean_diff"][0] == 5
    assert out["layers"]["a"]["f1_at_1"]["mean_diff"] > 0.95
    assert os.path.isfile(out["artifacts"]["f1_vs_k"])


def test_zoo_analyze_on_an_installed_digits_model(tmp_path, capsys):
    # `zoo analyze TOOL MODEL` in process (the CLI's main), on the digits task's probe data
    assert cli_main(["analyze", "sparse_probe", "gelu_mlp_digits", "--n", "120", "--tool-arg", "positive=[0,2,4,6,8]",
                     "--tool-arg", "max_k=4", "--tool-arg", 'methods=["mean_diff"]', "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)["result"]
    assert data["n"] == 120 and data["layers"] and os.path.isfile(data["artifacts"]["f1_vs_k"])
    for layer in data["layers"].values():
        assert layer["k"][0] == 1 and len(layer["f1"]["mean_diff"]) == len(layer["k"])
