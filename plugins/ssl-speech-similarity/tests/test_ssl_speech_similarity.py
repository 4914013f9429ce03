"""ssl-speech-similarity: the conformance kit; neuron alignment's and layer similarity's known answers (a permuted
copy is aligned neuron by neuron, a rotated copy only as a subspace); validation; the tools through zoo.analyze on
raw arrays and `zoo analyze` on a digits model; the claim's quick run."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zoo
from zoo.activations import ActivationSet
from zoo.testing import check_plugin
from zoo_ssl_speech_similarity.similarity import layer_score, neuron_alignment_pair
from zoo_ssl_speech_similarity.tool import layer_similarity, neuron_alignment


def _x(seed=0, n=200, d=16):
    return np.random.default_rng(seed).normal(size=(n, d))


def _rotation(d, seed=1):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q


def test_conformance():
    check_plugin("ssl-speech-similarity")


def test_permuted_copy_is_aligned_neuron_by_neuron_and_rotated_copy_only_as_a_subspace():
    x = _x()
    perm = x[:, np.random.default_rng(2).permutation(16)] * np.linspace(0.5, 3, 16) - 1.0  # rescaled, shifted
    p = neuron_alignment_pair(x, perm)
    assert p["maxcorr"] == pytest.approx(1.0) and p["matched_xy"] == 1.0 and p["matched_yx"] == 1.0
    rot = x @ _rotation(16)
    r = neuron_alignment_pair(x, rot)
    assert layer_score(x, rot) == pytest.approx(1.0)  # the same subspace: CKA 1
    assert r["maxcorr"] < 0.8 and r["matched_xy"] < 0.2  # but no neuron of X is a neuron of the rotation
    # CCA / SVCCA / RBF and debiased CKA also see the rotation as the same representation; RSA's correlation RDM
    # (patterns centred across features) is not rotation invariant, but it is permutation invariant
    for method in ("cca", "svcca", "rbf_cka", "debiased_cka"):
        assert layer_score(x, rot, method) == pytest.approx(1.0, abs=1e-8), method
    assert layer_score(x, x[:, ::-1], "rsa") == pytest.approx(1.0)
    # independent data: low at both levels
    assert layer_score(x, _x(5)) < 0.2


def test_dead_neurons_are_left_out_and_counted():
    x = _x(d=6)
    y = np.hstack([x, np.zeros((200, 2))])  # two dead units
    p = neuron_alignment_pair(x, y)
    assert p["dead_y"] == 2 and p["maxcorr"] == pytest.approx(1.0)


def test_input_forms_give_the_same_answer_and_matrices_have_a_known_diagonal():
    x1, x2 = _x(0, d=8), _x(1, d=5)
    a = ActivationSet({"l1": x1, "l2": x2})
    b = ActivationSet({"l1": x1 @ _rotation(8), "l2": 2 * x2})
    by_map = layer_similarity({"a": a, "b": b})
    by_other = layer_similarity(a, other=b)
    by_prefix = zoo.analyze("layer_similarity", {"a/l1": a["l1"], "a/l2": a["l2"], "b/l1": b["l1"], "b/l2": b["l2"]})
    m = np.array(by_map["matrices"]["a|b"]["matrix"])
    assert np.allclose(m, by_other["matrices"]["a|b"]["matrix"]) and np.allclose(m, by_prefix["matrices"]["a|b"]["matrix"])
    assert np.allclose(np.diag(m), 1.0) and m[0, 1] < 0.3 and by_map["diagonal_mean"] == pytest.approx(1.0)
    na = neuron_alignment({"a": a, "b": b})
    assert set(na["pairs"]) == {"a:l1|b:l1", "a:l2|b:l2"} and na["pairs"]["a:l2|b:l2"]["maxcorr"] == pytest.approx(1)
    within = neuron_alignment(a)  # one plain set: its layers against each other
    assert set(within["pairs"]) == {"model:l1|model:l2", "model:l2|model:l1"}


def test_validation_names_the_requirement(tmp_path):
    x = _x(n=10, d=4)
    with pytest.raises(ValueError, match="same inputs"):
        layer_similarity({"a": {"l": x}, "b": {"l": _x(n=9, d=4)}})
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        neuron_alignment({"a": {"l": bad}, "b": {"l": x}})
    with pytest.raises(ValueError, match="at least 3"):
        neuron_alignment({"a": {"l": x[:2]}, "b": {"l": x[:2]}})
    with pytest.raises(ValueError, match="share no layer"):
        neuron_alignment({"a": {"l": x}, "b": {"m": x}})
    with pytest.raises(ValueError, match="unknown method"):
        layer_similarity({"a": {"l": x}, "b": {"l": x}}, method="procrustes")
    with pytest.raises(ValueError, match="constant"):
        neuron_alignment({"a": {"l": np.ones((10, 3))}, "b": {"l": x}})
    with pytest.raises(ValueError, match="more than"):  # CCA with as many directions as samples
        layer_similarity({"a": {"l": _x(n=10, d=12)}, "b": {"l": _x(1, n=10, d=12)}}, method="cca")


def test_figures_are_written(tmp_path):
    sets = {"a": {"l1": _x(0, n=30, d=4), "l2": _x(1, n=30, d=3)}, "b": {"l1": _x(2, n=30, d=4), "l2": _x(3, n=30, d=3)}}
    ls = layer_similarity(sets, out_dir=str(tmp_path))
    na = neuron_alignment(sets, out_dir=str(tmp_path))
    assert os.path.isfile(ls["artifacts"]["a|b"]) and os.path.isfile(na["artifacts"]["maxcorr"])


def test_zoo_analyze_on_a_digits_model(capsys):
    from zoo.cli import main

    if "gelu_mlp_digits" not in zoo.list_models():  # a digits model of the kan-fair plugin, installed with the repo
        pytest.skip("needs an installed digits model: pip install ./plugins/kan-fair")
    assert main(["analyze", "layer_similarity", "gelu_mlp_digits", "--n", "40", "--layers",
                 "features.2,features.5,head"]) == 0
    res = json.loads(capsys.readouterr().out)["result"]
    m = np.array(res["matrices"]["gelu_mlp_digits|gelu_mlp_digits"]["matrix"])
    assert m.shape == (3, 3) and np.allclose(np.diag(m), 1.0)
    assert main(["analyze", "neuron_alignment", "gelu_mlp_digits", "--n", "40", "--layers", "features.2,head"]) == 0
    res = json.loads(capsys.readouterr().out)["result"]
    assert 0 < res["maxcorr"] <= 1


def test_quick_reproduction_separates_neurons_from_subspaces(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path))
    from zoo_ssl_speech_similarity import reproduce

    monkeypatch.setattr(reproduce, "KINDS", ("mlp",))
    monkeypatch.setattr(reproduce, "QUICK_STEPS", 40)
    monkeypatch.setattr(reproduce, "QUICK_N", 80)
    row = reproduce._measure.__wrapped__(0, True)
    t, r = row["trained"], row["random_twin"]
    assert t["mlp:cka_hidden"] > t["mlp:maxcorr_hidden"]  # subspaces agree more than neurons
    assert t["mlp:cka_act3"] > r["mlp:cka_act3"]  # the control: a random twin is less similar
