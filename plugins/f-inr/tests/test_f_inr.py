import math

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_f_inr.model import FINR, first_layer_w0, grid_axes
from zoo_f_inr.reproduce import REPRODUCTION
from zoo_task_image_fit import image_fit as task

SMALL = {"hidden": 4, "rank": 2}


def test_conformance(hub):
    check_plugin("f-inr", overrides={"finr_cp": SMALL, "finr_tucker": SMALL, "finr_tt": SMALL})


def _pts(n=5, d=3):
    torch.manual_seed(1)
    return torch.rand(n, d) * 2 - 1


@pytest.mark.parametrize("decomposition", ["cp", "tucker", "tt"])
def test_point_mode_follows_the_decomposition(decomposition):
    torch.manual_seed(0)
    m = FINR(in_features=3, out_features=2, hidden=8, rank=3, decomposition=decomposition).eval()
    x = _pts()
    with torch.no_grad():
        f = [net(x[:, i:i + 1]) for i, net in enumerate(m.nets)]  # raw axis-network outputs
        out = m(x)
        for n in range(x.shape[0]):
            for c in range(2):
                if decomposition == "cp":
                    a, b, e = (g[n].reshape(2, 3)[c] for g in f)
                    want = (a * b * e).sum()
                elif decomposition == "tucker":
                    a, b, e = (g[n].reshape(2, 3)[c] for g in f)
                    want = torch.einsum("pqs,p,q,s->", m.core[c], a, b, e)
                else:
                    a = f[0][n].reshape(2, 1, 3)[c]
                    b = f[1][n].reshape(2, 3, 3)[c] / 3 ** 0.5  # middle TT cores scaled by r^-1/2
                    e = f[2][n].reshape(2, 3, 1)[c]
                    want = (a @ b @ e).squeeze()
                assert torch.allclose(out[n, c], want, atol=1e-5)


@pytest.mark.parametrize("decomposition", ["cp", "tucker", "tt"])
def test_grid_mode_equals_point_mode_on_the_grid(decomposition):
    m = FINR(in_features=3, out_features=3, hidden=8, rank=4, decomposition=decomposition).eval()
    s = task.make_video_signal(frames=3, size=4)
    axes = grid_axes(s.coords)
    assert [a.numel() for a in axes] == [3, 4, 4]
    with torch.no_grad():
        assert torch.allclose(m.forward_grid(*axes).reshape(-1, 3), m(s.coords), atol=1e-5)


def test_grid_axes_rejects_scattered_points():
    assert grid_axes(task.coord_grid(3, 5)) is not None
    assert grid_axes(task.coord_grid(4, 4)[torch.randperm(16)]) is None
    assert grid_axes(task.make_signal("camera", 8, mode="inpaint").coords) is None


def test_axis_networks_are_sirens_with_the_authors_first_layer_frequency():
    m = zoo.create("finr_cp", w0_first=100.0)  # the authors' setting, for images of several hundred pixels per axis
    first = m.nets[0].body[0]
    assert first.w0 == 100.0 and float(first.linear.weight.detach().abs().max()) <= 1.0
    assert all(layer.w0 == 30.0 for layer in list(m.nets[0].body)[1:])
    assert m.nets[0].head.out_features == 32 and len(m.nets) == 2  # C x r for 2-D images
    pe = zoo.create("finr_cp", backbone="relu_pe", n_freqs=4)
    assert pe.nets[0].body[0].in_features == 8


def test_first_layer_frequency_scales_with_each_axis_resolution():
    # pi n / 16: 1/8 of the axis' Nyquist frequency pi n / 2 on [-1, 1]; the authors' 100 at n = 512
    assert first_layer_w0(512) == pytest.approx(100.0, abs=0.6)
    default = zoo.create("finr_cp")  # built for image_fit's 64x64 images
    assert [net.body[0].w0 for net in default.nets] == pytest.approx([4 * math.pi] * 2)
    video = zoo.create("finr_cp", in_features=3, out_features=3, resolution=(16, 32, 32))
    assert [net.body[0].w0 for net in video.nets] == pytest.approx([math.pi, 2 * math.pi, 2 * math.pi])
    assert all(layer.w0 == 30.0 for net in video.nets for layer in list(net.body)[1:])  # later layers unchanged
    # below Nyquist the first layer cannot alias: sin(w0 x) sampled on the axis changes sign fewer than n times
    n = 32
    x = task.coord_grid(1, n)[:, 1]
    signs = torch.sign(torch.sin(first_layer_w0(n) * x))
    assert int((signs[1:] != signs[:-1]).sum()) <= n // 8
    with pytest.raises(ValueError, match="one sample count per axis"):
        zoo.create("finr_cp", resolution=(16, 32, 32))


def test_fit_keeps_the_lowest_loss_parameters_and_decays_the_rate():
    s = task.make_signal("camera", 8)
    torch.manual_seed(0)
    m = zoo.create("finr_cp", hidden=8, rank=4, resolution=8)
    fig = task.fit(m, s, steps=40, lr=0.3, lr_decay=1.0)  # a constant rate that makes the loss jump around
    with torch.no_grad():
        kept = float(torch.mean((m(s.coords) - s.values) ** 2))
    assert kept == pytest.approx(min(fig["losses"]), rel=1e-4) and kept == pytest.approx(fig["kept_loss"], rel=1e-4)
    assert kept < fig["losses"][-1]  # the last step was not the best one: the run ended below its best
    # lr_decay reaches the own fit: decaying to 0 freezes the parameters after the first step
    torch.manual_seed(0)
    frozen = task.fit(zoo.create("finr_cp", hidden=8, rank=4, resolution=8), s, steps=4, lr=1e-2, lr_decay=0.0)
    assert frozen["losses"][1] == frozen["losses"][2] == frozen["losses"][3] != frozen["losses"][0]
    assert zoo.create("finr_cp").default_lr_decay == 0.1


def test_fit_uses_grid_mode_on_grids_and_point_mode_otherwise():
    video = task.make_video_signal(frames=2, size=4)
    m = zoo.create("finr_tt", in_features=3, out_features=3, hidden=4, rank=2)
    fig = task.fit(m, video, steps=3)
    assert fig["grid_mode"] and len(fig["losses"]) == 3
    inpaint = task.make_signal("camera", 8, mode="inpaint")
    assert not task.fit(zoo.create("finr_cp", hidden=4, rank=2), inpaint, steps=2)["grid_mode"]


def test_quick_reproduction_trains_every_row_for_the_same_budget():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert set(r.table) == {"finr_cp", "finr_tucker", "finr_tt", "siren", "relu-ff"} and r.seeds == [0, 1]
    assert r.settings["budget_s"] == REPRODUCTION.quick_budget_s and r.settings["steps"] is None
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    assert r.table["siren"]["params"] == pytest.approx(r.table["finr_cp"]["params"], rel=0.1)
    assert all(n >= 1 for row in r.per_seed.values() for n in row["steps"])  # no step-count assert: timing is shared
    assert r.per_seed["finr_cp"]["best_psnr_train"] != r.per_seed["siren"]["best_psnr_train"]
    assert [c["check"] for c in r.checks] == ["seconds_per_step: siren - finr_cp >= 0",
                                              "seconds_per_step: relu-ff - finr_cp >= 0",
                                              "best_psnr_train: finr_cp - siren >= 0", "best_psnr_train: finr_cp - relu-ff >= 0",
                                              "psnr_test: finr_cp - siren >= 0", "psnr_test: finr_cp - relu-ff >= 0"]


def test_pretrained_tag_ships_a_pinned_snapshot_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["finr_tt"][0].weights["video"]
    assert (w.repo, w.recipe) == ("zoo-models/finr-tt-video", "zoo_f_inr.train:video")
    # the recipe's weights ship in the plugin, held to these sha256s; the Hub repo is not published (no commit)
    assert w.revision == "main" and w.snapshot is not None and set(w.files) == {"config.json", "model.safetensors"}
    assert callable(resolve_target(w.recipe))


def test_video_tag_model_args_survive_save_and_reload(tmp_path):
    # the tag is a 3-axis RGB finr_tt: its in/out features must come back from config.json
    torch.manual_seed(0)
    m = zoo.create("finr_tt", in_features=3, out_features=3, hidden=8, rank=2).eval()
    back = zoo.create(f"local-dir:{zoo.save_pretrained(m, tmp_path / 'tag')}", pretrained=True).eval()
    x = torch.rand(5, 3) * 2 - 1
    with torch.no_grad():
        assert back(x).shape == (5, 3) and torch.equal(m(x), back(x))
