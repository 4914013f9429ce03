"""repr-inversion: conformance, known answers (the identity representation inverts almost exactly, a constant one gives
the mean image, whose error is the data variance; LBP of a flat image), the feature extractors' shapes, validation,
and the tool through raw arrays, a model and the command line."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_repr_inversion.inversion import UpConvDecoder, hog_features, invert, lbp_features, psnr

SMALL = {"hidden": 64, "channels": 16, "batch": 32}


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _shapes(n=160, seed=0):
    from zoo_task_rep_metrics.shapes import shapes_data

    return shapes_data(n, seed=seed)


def test_conformance(hub):
    check_plugin("repr-inversion")


def _linear_images(n=200, seed=0):
    """Images that are a linear function of 4 coefficients: the coefficients determine the image exactly."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((4, 1, 8, 8)).astype(np.float32)
    a = rng.standard_normal((n, 4)).astype(np.float32)
    return a, np.einsum("nk,kchw->nchw", a, basis)


def test_identity_representation_inverts_almost_exactly():
    # a representation that determines the image is inverted almost exactly: far below the mean-image error (a
    # decoder that ignored its input, the no-information baseline, stays at nmse 1)
    a, x = _linear_images()
    r = invert(a, x, steps=100, lr=3e-3, seed=0, **SMALL)
    assert r["nmse"] < 0.1 and r["psnr"] > r["mean_image_psnr"] + 8


def test_constant_representation_gives_the_mean_image():
    _, x = _linear_images(seed=1)
    r = invert(np.ones((len(x), 5)), x, steps=120, lr=3e-3, seed=0, **SMALL)
    te = r["test_idx"]
    tr = np.setdiff1d(np.arange(len(x)), te)
    variance = float(((x[te] - x[tr].mean(0)) ** 2).mean())  # the closed form of the no-information error
    assert r["mean_image_mse"] == pytest.approx(variance, rel=1e-5)
    assert 0.9 < r["nmse"] < 1.15
    recon_mean = r["recon"].mean(0)
    assert np.abs(r["recon"] - recon_mean).max() < 1e-5  # the same image for every input


def test_features_and_decoder_shapes():
    x = _shapes(n=4)["x"]
    assert hog_features(x).shape == (4, 324)  # 3x3 blocks x 2x2 cells x 9 orientations
    flat = np.full((2, 1, 16, 16), 0.5, np.float32)
    lbp = lbp_features(flat)
    assert lbp.shape == (2, 160) and np.allclose(lbp.reshape(2, 16, 10)[:, :, 8], 1.0)  # flat: every code is P = 8
    assert UpConvDecoder(7, (1, 8, 8))(torch.zeros(3, 7)).shape == (3, 1, 8, 8)
    assert UpConvDecoder(7, (3, 10, 9))(torch.zeros(2, 7)).shape == (2, 3, 10, 9)  # cropped
    assert psnr(0.01, 1.0) == pytest.approx(20.0)


def test_validation_names_the_requirement():
    x = _shapes(n=20)["x"]
    f = x.reshape(20, -1)
    with pytest.raises(ValueError, match="one feature row per image"):
        invert(f[:10], x)
    with pytest.raises(ValueError, match="at least 8"):
        invert(f[:5], x[:5])
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        invert(f, x.reshape(20, -1))
    bad = f.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        invert(bad, x)
    with pytest.raises(ValueError, match="images"):
        zoo.analyze("repr-inversion", {"f": f})
    with pytest.raises(ValueError, match="same N"):
        zoo.analyze("repr-inversion", {"f": f}, images=x[:12])


def test_tool_on_raw_arrays_and_through_a_model_and_the_cli(tmp_path, capsys):
    a, x = _linear_images(n=120, seed=2)
    res = zoo.analyze("repr-inversion", {"coeffs": a, "noise": np.random.default_rng(0).standard_normal((120, 4))},
                      images=x, steps=70, lr=3e-3, out_dir=str(tmp_path))
    assert res["layers"]["coeffs"]["nmse"] < 0.2 < 0.8 < res["layers"]["noise"]["nmse"]
    assert (tmp_path / "repr_inversion.png").exists()
    to_layer = zoo.analyze("repr-inversion", {"img": x.reshape(120, -1), "coeffs": a}, target="img", steps=5)
    assert list(to_layer["layers"]) == ["coeffs"] and to_layer["image_shape"] == [1, 8, 8]
    from zoo.cli import main
    from zoo_task_digits.task import probe_data

    xs, _ = probe_data(60)
    model = zoo.create("mrl_digits_cnn")
    out = zoo.analyze("repr-inversion", model, inputs=xs, images=xs, layers=["backbone.features.14"], steps=5)
    assert out["image_shape"] == [1, 8, 8] and out["layers"]["backbone.features.14"]["mse"] > 0
    capsys.readouterr()
    assert main(["analyze", "repr-inversion", "mrl_digits_cnn", "--layers", "backbone.features.14", "--n", "40",
                 "--tool-arg", "images=digits_classify", "--tool-arg", "steps=5"]) == 0
    got = json.loads(capsys.readouterr().out)["result"]
    assert got["n"] == 40 and 0 < got["layers"]["backbone.features.14"]["nmse"]


def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_repr_inversion.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    assert rows["mean_image"]["nmse"]["mean"] == 1.0 and 0 <= rows["probs"]["colour_acc"]["mean"] <= 1
