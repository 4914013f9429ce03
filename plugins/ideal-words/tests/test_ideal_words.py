"""ideal-words: conformance, known answers (an additive table is rebuilt exactly, a random one is not; centred means
equal the least-squares fit), the uses (left-out pair, debiasing, retrieval) on planted data, validation, and the tool
through zoo.analyze on raw arrays and on a model."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_ideal_words import iw


def _additive(n_a=4, n_o=5, d=12, seed=0):
    rng = np.random.default_rng(seed)
    u0, ua, uo = rng.standard_normal(d), rng.standard_normal((n_a, d)), rng.standard_normal((n_o, d))
    return u0 + ua[:, None] + uo[None, :]


def _samples(table, per=40, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    n_a, n_o, d = table.shape
    a = np.repeat(np.arange(n_a), n_o * per)
    o = np.tile(np.repeat(np.arange(n_o), per), n_a)
    return table[a, o] + noise * rng.standard_normal((len(a), d)), a, o


def test_conformance(hub):
    check_plugin("ideal-words")


def test_additive_table_is_rebuilt_exactly_and_random_is_not():
    t = _additive()
    rec = iw.reconstruction(t)
    assert rec["r2"] == pytest.approx(1.0, abs=1e-12) and rec["residual"] < 1e-6 and rec["interaction_share"] < 1e-12
    w = iw.ideal_words(t)
    assert np.allclose(w["ua"].sum(0), 0) and np.allclose(w["uo"].sum(0), 0)  # centred ideal words
    rnd = iw.reconstruction(np.random.default_rng(1).standard_normal((4, 5, 200)))
    # a random table's additive part is (|A|-1 + |O|-1) / (|A||O| - 1) = 7/19 of its variance in expectation
    assert 0.2 < rnd["r2"] < 0.55


def test_missing_cell_fit_recovers_additive_table_and_matches_centred_means():
    t = _additive(seed=3)
    mask = np.ones(t.shape[:2], bool)
    mask[1, 2] = mask[3, 0] = False
    w = iw.ideal_words(t, mask)
    assert np.allclose(iw.compose(w), t, atol=1e-9)  # the left-out pairs are predicted exactly
    noisy = t + 0.3 * np.random.default_rng(0).standard_normal(t.shape)
    full, ls = iw.ideal_words(noisy), iw.ideal_words(noisy, np.ones(t.shape[:2], bool) | False)
    for k in ("u0", "ua", "uo"):
        assert np.allclose(full[k], ls[k])
    bad = np.zeros(t.shape[:2], bool)
    bad[0] = True
    with pytest.raises(ValueError, match="at least one observed pair"):
        iw.ideal_words(t, bad)


def test_orthogonal_factors_have_90_degree_angles():
    d = 16
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((d, d)))[0]
    ua = np.array([q[:, 0], -q[:, 0], q[:, 1], -q[:, 1]])
    uo = np.array([q[:, 2], -q[:, 2], q[:, 3]-q[:, 4], q[:, 4]-q[:, 3]])
    t = ua[:, None] + uo[None]
    ang = iw.factor_angles(iw.ideal_words(t))
    assert ang["min_angle"] == pytest.approx(90.0, abs=1e-6) and ang["rank_attribute"] == 2
    shared = ua[:, None] + ua[None]  # both factors in the same plane
    assert iw.factor_angles(iw.ideal_words(shared))["min_angle"] < 1e-3


def test_uses_on_planted_compositional_data():
    t = _additive(4, 4, 32, seed=5)
    x, a, o = _samples(t, noise=0.3)
    table, mask = iw.pair_table(x, a, o, normalize=False)
    assert mask.all()
    uns = iw.unseen_pairs(x, a, o, table)
    # composition predicts the left-out pair; averaging its neighbours shrinks u_a + u_o threefold
    assert uns["iw_acc"] > 0.95 and uns["iw_cos"] > 0.99 and uns["neighbour_cos"] < 0.93
    deb = iw.debias(x[::2], a[::2], o[::2], x[1::2], a[1::2], o[1::2], table)
    assert deb["attribute_before"] > 0.95 and deb["attribute_after_iw"] < 0.3 and deb["attribute_after_random"] > 0.9
    assert deb["object_after_iw"] > 0.95
    ret = iw.retrieval(x, a, o, table, max_queries=50)
    assert ret["iw_top1"] > 0.9 and ret["image_top1"] == 0.0


def test_validation_names_the_requirement():
    with pytest.raises(ValueError, match=r"\(\|A\|, \|O\|, D\)"):
        iw.reconstruction(np.ones((3, 4)))
    with pytest.raises(ValueError, match="at least 2 attributes"):
        iw.ideal_words(np.ones((1, 3, 4)))
    with pytest.raises(ValueError, match="NaN"):
        iw.pair_table(np.array([[np.nan, 1.0]] * 4), [0, 1, 0, 1], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="n_objects"):
        zoo.analyze("ideal-words", {"h": np.ones((10, 3))}, labels=np.arange(10))
    with pytest.raises(ValueError, match="embedding table"):
        zoo.analyze("ideal-words", {"h": np.ones((10, 3))})
    x, a, o = _samples(_additive(2, 2, 4), per=4)
    keep = ~((a == 1) & (o == 1))
    with pytest.raises(ValueError, match="no samples"):
        zoo.analyze("ideal-words", {"h": x[keep]}, labels=np.stack([a[keep], o[keep]], 1))


def test_tool_on_raw_arrays_and_through_a_model(tmp_path, capsys):
    t = _additive(3, 4, 10)
    res = zoo.analyze("ideal-words", {"T": t}, normalize=False, out_dir=str(tmp_path))["layers"]["T"]
    assert res["r2"] == pytest.approx(1.0, abs=1e-6) and res["n_attributes"] == 3
    assert (tmp_path / "ideal_words.png").exists()
    x, a, o = _samples(t, per=10, noise=0.1)
    res = zoo.analyze("ideal-words", {"h": x}, labels=np.stack([a, o], 1))["layers"]["h"]
    assert res["r2"] > 0.9 and res["unseen_iw_acc"] > 0.8
    from zoo_task_digits.task import probe_data

    xd, yd = probe_data(200)
    out = zoo.analyze("ideal-words", zoo.create("gelu_mlp_digits"), inputs=xd, labels=yd, layers=["output"],
                      n_objects=5)["layers"]["output"]
    assert out["n_attributes"] == 2 and out["n_objects"] == 5 and 0 <= out["r2"] <= 1
    import json

    from zoo.cli import main

    capsys.readouterr()
    assert main(["analyze", "ideal-words", "gelu_mlp_digits", "--layers", "output", "--n", "200", "--tool-arg",
                 "n_objects=5"]) == 0
    cli = json.loads(capsys.readouterr().out)["result"]["layers"]["output"]
    assert cli["n_objects"] == 5 and cli["n_samples"] == 200


def test_quick_reproduction_beats_baselines():
    from zoo.claims import run_claim
    from zoo_ideal_words.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    assert rows["ideal_words"]["r2"]["mean"] > rows["baseline"]["r2"]["mean"] + 0.2
    assert rows["ideal_words"]["colour_removed"]["mean"] > rows["baseline"]["colour_removed"]["mean"] + 0.3
