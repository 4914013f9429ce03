"""riemannian-dimension: conformance, the known answers (a planted rank-k spectrum, the ridge formula's closed form,
exact invariances that the parameter-count baseline does not share), the bounds' formulas, validation, and the tool
through zoo.analyze on raw arrays and on an installed model."""
from __future__ import annotations

import math

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_riemannian_dimension.dimension import dimension_bound, effective_dimension, norm_bound, riemannian_dimension, spectrum


def test_conformance(hub):
    check_plugin("riemannian-dimension")


def planted(n: int, width: int, k: int, seed: int) -> np.ndarray:
    """n points whose centred features span exactly k orthonormal directions of R^width with equal variance."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, k))
    z -= z.mean(0)
    u, _, vt = np.linalg.svd(z, full_matrices=False)
    z = u @ vt * math.sqrt(n)  # whitened: covariance exactly the identity on k directions
    basis, _ = np.linalg.qr(rng.standard_normal((width, k)))
    return z @ basis.T + 3.0  # an offset the centring removes


@pytest.mark.parametrize("k", [1, 5, 12])
def test_planted_rank_k_gives_k(k):
    h = planted(200, 40, k, seed=k)
    lam = spectrum(h)
    assert lam[:k] == pytest.approx(np.ones(k), rel=1e-9) and np.abs(lam[k:]).max() < 1e-9
    assert effective_dimension(lam, 1e-3, form="hard") == k
    eps = 0.01  # the ridge count's closed form for k equal eigenvalues: k / (1 + k eps)
    assert effective_dimension(lam, eps) == pytest.approx(k / (1 + k * eps), rel=1e-9)


def test_riemannian_dimension_of_planted_net_and_its_invariances():
    n = 300
    x, h1, out = planted(n, 20, 6, 0), planted(n, 50, 3, 1), planted(n, 10, 2, 2)
    eps = 1e-6
    res = riemannian_dimension([x, h1, out], eps=eps, form="hard")
    assert res["ranks"] == [6, 3, 2] and res["dim"] == (6 + 1) * 3 + (3 + 1) * 2
    assert res["params"] == 21 * 50 + 51 * 10  # the size baseline counts the widths
    # padding a layer with dead (constant) units changes the model size but not d_R; rotating a layer changes nothing
    pad = np.hstack([h1, np.full((n, 200), 0.5)])
    rot, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((50, 50)))
    res_pad = riemannian_dimension([x, pad, out], eps=eps, form="hard")
    res_rot = riemannian_dimension([x, h1 @ rot, out], eps=eps)
    assert res_pad["dim"] == res["dim"] and res_pad["params"] > res["params"] + 200 * 10
    assert res_rot["dim"] == pytest.approx(riemannian_dimension([x, h1, out], eps=eps)["dim"], rel=1e-9)
    assert res["dim_bound"] < res_pad["dim_bound"] * 1.000001 < res_pad["size_bound"]


def test_bounds_formulas():
    n, delta = 1000, 0.05
    conf = math.sqrt(math.log(1 / delta) / (2 * n))
    assert dimension_bound(10, n, delta) == pytest.approx(math.sqrt(20 * math.log(math.e * 100) / n) + conf)
    assert dimension_bound(5000, n, delta) == pytest.approx(math.sqrt(2 * 5000 / n) + conf)  # d > n: log term 1
    w = [np.full((3, 2), 1.0), np.full((1, 3), 2.0)]  # Frobenius norms sqrt(6) and sqrt(12)
    nb = norm_bound(w, None, input_norm=2.0, margin=0.5, n=n, delta=delta)
    expect = 2 * 2.0 * (math.sqrt(4 * math.log(2)) + 1) * math.sqrt(72) / (0.5 * math.sqrt(n))
    assert nb == pytest.approx(expect + 3 * math.sqrt(math.log(2 / delta) / (2 * n)))


def test_validation_names_the_requirement():
    with pytest.raises(ValueError, match="at least 2 layers"):
        riemannian_dimension([np.ones((5, 3))])
    with pytest.raises(ValueError, match="same N"):
        riemannian_dimension([np.ones((5, 3)), np.ones((6, 3))])
    with pytest.raises(ValueError, match="NaN"):
        riemannian_dimension([np.ones((5, 3)), np.array([[np.nan, 1.0]] * 5)])
    with pytest.raises(ValueError, match="at least 3"):
        riemannian_dimension([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="eps must be > 0"):
        effective_dimension([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="ridge"):
        effective_dimension([1.0, 2.0], 0.1, form="soft")
    with pytest.raises(ValueError, match="margin must be > 0"):
        norm_bound([np.ones((2, 2))], None, input_norm=1.0, margin=0.0, n=10)
    with pytest.raises(ValueError, match="at least 2 layers"):
        zoo.analyze("riemannian-dimension", {"x": np.ones((10, 3))})
    with pytest.raises(ValueError, match="NaN"):
        zoo.analyze("riemannian-dimension", {"x": np.ones((10, 3)), "h": np.full((10, 2), np.nan)})
    with pytest.raises(ValueError, match="margin="):
        zoo.analyze("riemannian-dimension", {"x": np.ones((10, 3)), "h": np.ones((10, 2))}, weights=[np.ones((2, 3))])


def test_tool_on_raw_arrays_and_through_a_model(tmp_path):
    n = 120
    layers = {"x": planted(n, 16, 4, 5), "h": planted(n, 32, 3, 6), "out": planted(n, 10, 2, 7)}
    res = zoo.analyze("riemannian-dimension", layers, form="hard", eps=1e-6, out_dir=str(tmp_path),
                      weights=[np.ones((32, 16)), np.ones((10, 32))], margin=1.0)
    assert res["dim"] == (4 + 1) * 3 + (3 + 1) * 2 and res["layers"]["h"]["rank"] == 3
    assert res["layers"]["h"]["compression"] == pytest.approx(3 / 32)
    assert res["norm_bound"] > res["size_bound"] > res["dim_bound"] and (tmp_path / "feature_spectra.png").exists()
    from zoo_task_digits.task import probe_data

    x, y = probe_data(60)
    model = zoo.create("gelu_mlp_digits")  # features.0 is the Flatten: the input; then the two GELU layers, logits
    out = zoo.analyze("riemannian-dimension", model, inputs=x, labels=y,
                      layers=["features.0", "features.3", "features.6", "output"])
    assert [out["layers"][k]["width"] for k in ("features.0", "features.3", "features.6", "output")] == [64, 48, 48, 10]
    assert out["n"] == 60 and 0 < out["dim"] < out["params"]


def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_riemannian_dimension.reproduce import REPRODUCTION

    res = run_claim(REPRODUCTION, quick=True)
    row = res.rows["w512_sgd"]
    assert row["riem_dim"]["mean"] < row["params"]["mean"] and row["norm_bound"]["mean"] > row["riem_bound"]["mean"]
