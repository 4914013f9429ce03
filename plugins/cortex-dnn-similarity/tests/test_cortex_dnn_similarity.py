"""cortex-dnn-similarity: conformance, known answers of the SSM (a layer compared with itself gives 1 in every draw;
a planted readout's layer is recovered; noise prefers none), validation, and the tool through zoo.analyze and
`zoo analyze` on a digits model."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_cortex_dnn_similarity.ssm import similarity_of_similarity


def test_conformance():
    check_plugin("cortex-dnn-similarity")


def _layers(seed=0, n=60):
    """Three layers: a random input, a nonlinear function of it, and an unrelated one."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, 20))
    return rng, {"l0": a, "l1": np.tanh(a @ rng.standard_normal((20, 20)) / 2), "l2": rng.standard_normal((n, 20))}


def test_a_layer_compared_with_itself_gives_one_in_every_draw():
    _, layers = _layers()
    res = similarity_of_similarity(layers["l1"], layers, n_boot=10, unit_frac=1.0)
    assert res["ssm"]["l1"] == pytest.approx(1.0) and res["interval"]["l1"] == pytest.approx([1.0, 1.0])
    assert res["best_layer"] == "l1" and res["frequency"]["l1"] == 1.0 and res["pseudo_depth"] == 0.5
    assert res["ssm"]["l2"] < 0.3


def test_a_noisy_readout_is_recovered_and_noise_has_no_preferred_layer():
    rng, layers = _layers(1)
    neurons = layers["l2"] @ rng.standard_normal((20, 60))
    neurons += neurons.std() * rng.standard_normal(neurons.shape)
    res = similarity_of_similarity(neurons, layers, n_boot=30, stim_frac=0.7, unit_frac=0.4)
    assert res["best_layer"] == "l2" and res["frequency"]["l2"] >= 0.9 and res["pseudo_depth_interval"] == [1.0, 1.0]
    noise = similarity_of_similarity(rng.standard_normal((60, 60)), layers, n_boot=30, stim_frac=0.7, unit_frac=0.4)
    assert all(lo < 0 < hi for lo, hi in noise["interval"].values()) and max(noise["ssm"].values()) < 0.1


@pytest.mark.parametrize(("responses", "layers", "kw", "needle"), [
    (np.full((20, 5), np.nan), {"a": np.ones((20, 3))}, {}, "NaN"),
    (np.ones((20, 5)), {"a": np.ones((19, 3))}, {}, "same 20 stimuli"),
    (np.ones((4, 5)), {"a": np.ones((4, 3))}, {}, "at least 4"),
    (np.ones((20, 3)), {"a": np.ones((20, 3))}, {"unit_frac": 0.3}, "at least 2"),
    (np.ones((20, 3, 2)), {"a": np.ones((20, 3))}, {}, "N_stim, N_units"),
    (np.ones((20, 3)), {}, {}, "at least one layer"),
    (np.ones((20, 3)), {"a": np.ones((20, 3))}, {"method": "kendall"}, "unknown SSM method"),
])
def test_inputs_are_validated(responses, layers, kw, needle):
    with pytest.raises(ValueError, match=needle):
        similarity_of_similarity(responses, layers, **kw)


def test_tool_on_raw_arrays_names_the_responses_and_draws(tmp_path):
    rng, layers = _layers(2)
    neurons = layers["l0"] @ rng.standard_normal((20, 30))
    out = zoo.analyze("similarity_of_similarity", {"responses": neurons, **layers}, n_boot=10, out_dir=str(tmp_path))
    assert out["layers"] == ["l0", "l1", "l2"] and out["best_layer"] == "l0" and out["pseudo_depth"] == 0.0
    assert os.path.isfile(out["artifacts"]["ssm"])
    with pytest.raises(ValueError, match="no responses layer 'recordings'"):
        zoo.analyze("similarity_of_similarity", layers, responses="recordings")


def test_zoo_analyze_on_a_digits_model(capsys):
    from zoo.cli import main

    if "gelu_mlp_digits" not in zoo.list_models():  # a digits model of the kan-fair plugin, installed with the repo
        pytest.skip("needs an installed digits model: pip install ./plugins/kan-fair")

    # the model's logits stand in for recordings: the layer nearest the output should match them best
    assert main(["analyze", "similarity_of_similarity", "gelu_mlp_digits", "--n", "40", "--layers",
                 "features.2,features.5,head", "--tool-arg", "responses=head", "--tool-arg", "n_boot=5"]) == 0
    res = json.loads(capsys.readouterr().out)["result"]
    assert res["layers"] == ["features.2", "features.5"] and res["best_layer"] == "features.5"
