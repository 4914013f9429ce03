"""fv-steer-vs-decode: conformance, known answers (a planted answer direction is logit-lens decodable, a sign-flipped one
only through the diagonal tuned lens, the H&L control is at chance for a per-input random label map, FVs equal to an
answer's unembedding are coherent, random ones are not), contingency bookkeeping, validation, the tool on raw arrays
and through a model, and the experiment's exact properties on a tiny GPT."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.task import torch_threads
from zoo.testing import check_plugin
from zoo_fv_steer_vs_decode.decode import (
    contingency,
    control_labels,
    diagonal_lens_accuracy,
    fit_diagonal_lens,
    logit_lens_accuracy,
    matrix_unembed,
    mlp_probe,
    pearson,
    unembed_stats,
)

V, D = 12, 24


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def test_conformance(hub):
    check_plugin("fv-steer-vs-decode")


def _planted(n=300, seed=0, scale=3.0, flip=False):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((V, D))
    y = rng.integers(0, V, n)
    sign = np.where(rng.random(D) < 0.5, -1.0, 1.0) if flip else np.ones(D)
    h = scale * w[y] * sign + 0.3 * rng.standard_normal((n, D))
    return h.astype(np.float32), y, w.astype(np.float32), sign


def test_planted_answer_direction_is_decodable_and_sign_flip_needs_the_tuned_lens():
    h, y, w, _ = _planted(n=200)
    u = matrix_unembed(w)
    assert logit_lens_accuracy(h, y, u).mean() > 0.95
    hf, yf, wf, sign = _planted(n=200, flip=True, seed=1)
    uf = matrix_unembed(wf)
    assert logit_lens_accuracy(hf, yf, uf).mean() < 0.4  # the raw lens reads the flipped state wrongly
    a, b = fit_diagonal_lens(hf[:100], yf[:100], uf, steps=100)
    assert diagonal_lens_accuracy(hf[100:], yf[100:], uf, a, b).mean() > 0.9


def test_control_task_is_at_chance_for_a_per_input_random_map_and_probe_reads_structure():
    rng = np.random.default_rng(3)
    n, c = 600, 4
    y = rng.integers(0, c, n)
    x = np.eye(c)[y] @ rng.standard_normal((c, 16)) + 0.3 * rng.standard_normal((n, 16))
    ctrl = control_labels(np.arange(n), y, seed=0)  # every input its own type: labels carry nothing learnable
    acc_ctrl = mlp_probe(x[:300], ctrl[:300], x[300:], ctrl[300:], steps=200).mean()
    acc_real = mlp_probe(x[:300], y[:300], x[300:], y[300:], steps=200).mean()
    assert abs(acc_ctrl - 1 / c) < 0.1 and acc_real > 0.95
    # a control map on a few types is a function of the type: same type, same label
    t = rng.integers(0, 5, n)
    cl = control_labels(t, y, seed=1)
    assert all(len(set(cl[t == k])) == 1 for k in range(5))


def test_unembed_stats_coherent_for_answer_directions_not_for_random_ones():
    _, _, w, _ = _planted()
    u = matrix_unembed(w)
    doms = [[0, 1, 2], [3, 4, 5]]
    s = unembed_stats(5 * w[[0, 3]], u, doms, top_k=1)
    assert s["top"][:, 0].tolist() == [0, 3] and (s["coherence"] == 1).all()
    uniform = unembed_stats(np.zeros((1, D)), u, top_k=3)
    assert uniform["entropy"][0] == pytest.approx(1.0, abs=1e-6)  # zero logits: the uniform distribution


def test_contingency_adds_up_and_counts_each_cell():
    s = np.array([[1, 1, 0], [0, 0, 1]], bool)
    d = np.array([[1, 0, 0], [1, 0, 1]], bool)
    c = contingency(s, d)
    assert c == {"steerable_decodable": 2, "steerable_not_decodable": 1, "decodable_not_steerable": 1, "neither": 2,
                 "cells": 6}
    assert sum(v for k, v in c.items() if k != "cells") == c["cells"]
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)


def test_validation_names_the_requirement():
    h, y, w, _ = _planted(n=40)
    with pytest.raises(ValueError, match="needs labels"):
        zoo.analyze("steer-decode", {"h": h})
    with pytest.raises(ValueError, match="integer class labels"):
        zoo.analyze("steer-decode", {"h": h}, labels=y.astype(float))
    with pytest.raises(ValueError, match="at least 10"):
        zoo.analyze("steer-decode", {"h": h[:5]}, labels=y[:5], steps=2)
    with pytest.raises(ValueError, match="NaN"):
        bad = h.copy()
        bad[0, 0] = np.nan
        zoo.analyze("steer-decode", {"h": bad}, labels=y, steps=2)
    with pytest.raises(ValueError, match="one per analysed layer"):
        zoo.analyze("steer-decode", {"h": h}, labels=y, steer_gain=[0.1, 0.2])
    with pytest.raises(ValueError, match="pass unembed"):
        zoo.analyze("steer-decode", {"h": h}, labels=y, vectors=w[:2])
    with pytest.raises(ValueError, match="must match"):
        zoo.analyze("steer-decode", {"h": h}, labels=y, unembed=w[:, :5])
    with pytest.raises(ValueError, match="same shape"):
        contingency(np.zeros(3, bool), np.zeros(4, bool))


def test_tool_on_raw_arrays_and_through_a_model(tmp_path):
    h, y, w, _ = _planted(n=200)
    rng = np.random.default_rng(9)
    noise = rng.standard_normal(h.shape).astype(np.float32)
    res = zoo.analyze("steer-decode", {"planted": h, "noise": noise}, labels=y, unembed=w, steps=60, lens_steps=40,
                      steer_gain={"planted": 0.0, "noise": 0.5}, vectors=3 * w[:2], domains=[[0], [1]], top_k=1,
                      out_dir=str(tmp_path))
    lay = res["layers"]
    assert lay["planted"]["logit_lens"] > 0.9 and lay["planted"]["decodable"]
    assert lay["noise"]["logit_lens"] < 0.3 and not lay["noise"]["decodable"]
    assert res["contingency"] == {"steerable_decodable": 0, "steerable_not_decodable": 1,
                                  "decodable_not_steerable": 1, "neither": 0, "cells": 2}
    assert res["vectors"]["coherence"] == [1.0, 1.0] and (tmp_path / "steer_decode.png").exists()
    from zoo_task_digits.task import probe_data

    xs, ys = probe_data(40)
    out = zoo.analyze("steer-decode", zoo.create("gelu_mlp_digits"), inputs=xs, labels=ys, layers=["output"],
                      steps=10)
    assert 0 <= out["layers"]["output"]["probe"] <= 1 and "logit_lens" not in out["layers"]["output"]


def test_experiment_on_a_tiny_gpt_is_consistent():
    from zoo_fv_steer_vs_decode.experiment import run, steer_accuracy
    from zoo_task_icl_toy import task as T
    from zoo_task_icl_toy.gpt import HookedGPT

    torch.manual_seed(0)
    gpt = HookedGPT(vocab_size=T.D.VOCAB.size, dim=16, depth=2, heads=2, block_size=32).eval()
    r = run(gpt, 0, n_fit=6, n_test=6, probe_steps=5, lens_steps=5)
    assert r["gain"].shape == (8, 2) and r["fv_table"]["cells"] == 16
    t = r["fv_table"]
    assert t["steerable_decodable"] + t["steerable_not_decodable"] + t["decodable_not_steerable"] + t["neither"] == 16
    assert t["task_cells"] == 8
    # a zero vector steers nothing: exactly the no-vector accuracy
    test = T.icl_data("token", n=6, seed=0, stream="test")
    with torch.no_grad():
        plain = (gpt(test.zero.inputs)[:, -1].argmax(-1) == test.zero.targets).float()
    assert torch.equal(steer_accuracy(gpt, test.zero, torch.zeros(8, 16), 1), plain)
    assert np.allclose(r["gain"], r["acc_fv"] - r["zero"][:, None])
