import math

import pytest
import torch

from zoo.task import count_params, match_params
from zoo_nn.inr import FourierFeatureMLP, Siren
from zoo_task_image_fit import image_fit as T


def test_grid_is_row_major_pixel_centres_matching_reshape():
    g = T.coord_grid(2, 3)
    assert g.shape == (6, 2)
    ys, xs = [-0.5, 0.5], [-2 / 3, 0.0, 2 / 3]
    expected = torch.tensor([[y, x] for y in ys for x in xs])
    assert torch.allclose(g, expected)
    # pixel (row r, col c) of img.reshape(-1, C) is entry r * W + c
    img = torch.arange(6.0).reshape(2, 3, 1)
    flat = img.reshape(-1, 1)
    k = 1 * 3 + 2
    assert flat[k, 0] == img[1, 2, 0] and torch.allclose(g[k], torch.tensor([0.5, 2 / 3]))


def test_load_image_shapes_range_and_names():
    cam = T.load_image("camera", 32)
    ast = T.load_image("astronaut", 16)
    assert cam.shape == (32, 32, 1) and ast.shape == (16, 16, 3) and cam.dtype == torch.float32
    assert 0.0 <= float(cam.min()) and float(cam.max()) <= 1.0 and float(cam.std()) > 0.1
    # anti-aliased downsampling keeps the mean brightness
    assert abs(float(cam.mean()) - float(T.load_image("camera", 128).mean())) < 0.01
    with pytest.raises(ValueError, match="camera"):
        T.load_image("eagle")


def test_psnr_and_ssim_on_known_inputs():
    x = torch.rand(64, 64, 1)
    assert T.psnr(x, x) == math.inf
    noisy = x + 0.1 * torch.where(torch.rand_like(x) < 0.5, -1.0, 1.0)  # MSE exactly 0.01
    assert T.psnr(noisy, x) == pytest.approx(20.0, abs=1e-4)
    assert T.psnr(x + 0.01, x) == pytest.approx(40.0, abs=1e-3)
    assert T.ssim(x, x) == pytest.approx(1.0)
    noisier = x + 0.3 * torch.where(torch.rand_like(x) < 0.5, -1.0, 1.0)
    assert T.ssim(noisier, x) < T.ssim(noisy, x) < 0.99


def test_signals_fit_inpaint_and_video():
    s = T.make_signal("camera", 16)
    assert s.shape == (16, 16, 1) and s.test_shape == (32, 32, 1)
    assert torch.equal(s.values.reshape(s.shape), T.load_image("camera", 16))
    p = T.make_signal("camera", 16, mode="inpaint")
    assert p.coords.shape[0] == 192 and p.test_coords.shape[0] == 64
    assert torch.equal(p.coords, T.make_signal("camera", 16, mode="inpaint").coords)  # seeded
    both = torch.cat([p.coords, p.test_coords])
    assert torch.unique(both, dim=0).shape[0] == 256  # disjoint, covering the grid
    v = T.make_video_signal(frames=4, size=8)
    video = T.load_video(frames=4, size=8)
    assert v.coords.shape == (256, 3) and v.test_shape == (4, 16, 16, 3)
    assert torch.equal(v.values.reshape(v.shape), video)
    assert not torch.equal(video[0], video[-1])  # the window moves
    assert torch.all(v.coords[:64, 0] == v.coords[0, 0]) and v.coords[64, 0] > v.coords[0, 0]  # t slowest


def test_siren_init_and_fourier_features():
    m = Siren(in_features=2, hidden=64, layers=3, w0=30.0)
    first, second = m.body[0].linear.weight.detach(), m.body[1].linear.weight.detach()
    assert float(first.abs().max()) <= 1 / 2 and float(first.abs().max()) > 0.4
    bound = math.sqrt(6 / 64) / 30
    assert float(second.abs().max()) <= bound and float(second.abs().max()) > 0.9 * bound
    ff = FourierFeatureMLP(hidden=32, layers=2, n_features=128, sigma=10.0, seed=0)
    assert "features.B" in dict(ff.named_buffers()) and count_params(ff) == 256 * 32 + 32 + 32 * 32 + 32 + 33
    assert float(ff.features.B.std()) == pytest.approx(10.0, rel=0.15)
    x = torch.rand(5, 2)
    emb = ff.features(x)
    assert torch.allclose(emb[:, :128] ** 2 + emb[:, 128:] ** 2, torch.ones(5, 128), atol=1e-5)


def test_match_params_is_close_and_keeps_rng():
    for target in (3_000, 20_000):
        m = match_params(lambda w: Siren(hidden=w), target)
        assert abs(count_params(m) - target) / target < 0.1
    torch.manual_seed(0)
    a = match_params(lambda w: Siren(hidden=w), 5_000)
    torch.manual_seed(0)
    b = Siren(hidden=a.head.in_features)
    assert torch.equal(a.body[0].linear.weight, b.body[0].linear.weight)


def test_siren_baseline_reaches_30db_on_camera_64_with_default_steps():
    torch.manual_seed(0)
    m = Siren(hidden=48, layers=3)
    fig = T.fit(m, T.make_signal("camera", 64), steps=T.DEFAULT_STEPS, lr=Siren.default_lr)
    assert fig["steps"] == T.DEFAULT_STEPS
    assert fig["psnr_train"] >= 30.0


def test_evaluate_baselines_figures_and_channel_check(tmp_path):
    torch.manual_seed(0)
    model = Siren(hidden=64, layers=3)  # 8577 parameters: both baselines can be sized to it (relu-ff starts at ~2k)
    r = T.evaluate(model, size=16, steps=5, out_dir=str(tmp_path))
    assert set(r.baselines) == {"siren", "relu-ff"}
    for b in r.baselines.values():
        assert abs(b["params"] - r.metrics["params"]) / r.metrics["params"] <= 0.1
        assert b["steps"] == 5
    assert {"psnr_train", "psnr_test", "ssim_train", "params", "seconds_per_step", "steps"} <= set(r.metrics)
    assert (tmp_path / "siren (model).png").stat().st_size > 1000 and len(r.artifacts) == 3
    with pytest.raises(ValueError, match="out_features=3"):
        T.evaluate(Siren(hidden=8, layers=1), image="astronaut", size=8, steps=1, baselines=[])


def test_a_model_with_its_own_fit_is_trained_by_it():
    class Own(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.v = torch.nn.Parameter(torch.zeros(1))
            self.calls = []

        def forward(self, x):
            return self.v.expand(x.shape[0], 1)

        def fit(self, signal, *, steps, budget_s, seed, progress):
            self.calls.append(steps)
            with torch.no_grad():
                self.v.fill_(float(signal.values.mean()))
            return {"steps": steps, "seconds_per_step": 0.0}

    m = Own()
    r = T.evaluate(m, size=8, steps=3, baselines=[])
    assert m.calls == [3] and r.metrics["psnr_train"] > 5
    T.check_output(m, m(T.example_input()))
    with pytest.raises(AssertionError):
        T.check_output(m, torch.zeros(16))


def test_describe_is_the_protocol_evaluate_runs():
    torch.manual_seed(0)
    r = T.evaluate(Siren(hidden=8, layers=1), size=8, steps=2, mode="inpaint", baselines=["siren"])
    d = T.describe(size=8, steps=2, mode="inpaint", baselines=["siren"])
    keys = ("image", "size", "mode", "steps", "budget_s")
    assert {k: d[k] for k in keys} == {k: r.config[k] for k in keys}
    assert r.n == 16 and d["test"] == "the 25% of the pixels not trained on"  # 64 pixels, 75% trained on
    assert set(d["baselines"]) == set(r.baselines) == {"siren"}
    full = T.describe()
    assert full["steps"] == T.DEFAULT_STEPS and full["budget_s"] is None and full["test"].startswith("the same image")
    # the baselines' settings are those of the networks build_baseline returns
    signal = T.make_signal("camera", 8)
    siren, ff = (T.build_baseline(n, params=8577, data=signal) for n in ("siren", "relu-ff"))
    s, f = full["baselines"]["siren"], full["baselines"]["relu-ff"]
    assert (type(siren).__name__, siren.default_lr, len(siren.body), siren.body[1].w0) == \
        (s["class"], s["lr"], s["layers"], s["w0"])
    assert (type(ff).__name__, ff.default_lr, len(ff.body) // 2, ff.features.B.shape[0]) == \
        (f["class"], f["lr"], f["layers"], f["n_features"])
    assert float(ff.features.B.std()) == pytest.approx(f["sigma"], rel=0.15)


def test_build_baseline_signature():
    sig = T.build_baseline("siren", params=3000, in_features=3, out_features=3)
    assert sig.body[0].linear.in_features == 3 and sig.head.out_features == 3
    with pytest.raises(ValueError, match="params="):
        T.build_baseline("siren")
    with pytest.raises(ValueError, match="relu-ff"):
        T.build_baseline("wire", params=3000)
    with pytest.raises(TypeError, match="in_features"):
        T.build_baseline("siren", params=3000, hidden=5)
