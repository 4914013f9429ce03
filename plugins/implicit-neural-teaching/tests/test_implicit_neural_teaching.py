import math

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_implicit_neural_teaching.model import Teacher, ratio_at, reselect_at, select_examples, teach
from zoo_implicit_neural_teaching.reproduce import REPRODUCTION
from zoo_task_image_fit import image_fit as task


def test_conformance(hub):
    check_plugin("implicit-neural-teaching",
                 overrides={"int_siren": {"hidden": 8}, "int_relu_ff": {"hidden": 4, "n_features": 8}})


def test_ratio_schedules_follow_the_paper():
    # "step": start at 0.2, +0.08 per tenth of the run
    assert [round(ratio_at("step", s, 1000), 2) for s in (0, 99, 100, 450, 999)] == [0.2, 0.2, 0.28, 0.52, 0.92]
    assert ratio_at("constant", 500, 1000) == 0.2
    assert ratio_at("linear", 500, 1000) == pytest.approx(0.6)
    assert ratio_at("cosine", 0, 1000) == pytest.approx(0.2) and ratio_at("cosine", 1000, 1000) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="step"):
        ratio_at("nope", 0, 10)


def test_incremental_reselection_is_dense_then_sparser():
    total = 1000
    early = [reselect_at("incremental", s, total) for s in range(0, 250)]
    assert all(early)  # every step during the first quarter
    stage2 = [s for s in range(400, 550) if reselect_at("incremental", s, total)]
    late = [s for s in range(850, 1000) if reselect_at("incremental", s, total)]
    assert stage2 == list(range(400, 550, 20))  # every 20 steps in the 2nd increment
    assert late == [850, 900, 950]  # every 50 steps in the last
    assert all(reselect_at("dense", s, total) for s in range(0, 1000, 37))


def test_teacher_selects_largest_residuals():
    pred = torch.tensor([[0.0, 0.0], [0.5, -0.5], [0.1, 0.0], [-0.9, 0.0], [0.2, 0.2]])
    assert select_examples(pred, torch.zeros(5, 2), 3).tolist() == [1, 3, 4]  # |r|_1 = 1.0, 0.9, 0.4
    r = select_examples(pred, torch.zeros(5, 2), 3, select="random", generator=torch.Generator().manual_seed(0))
    assert len(set(r.tolist())) == 3


def test_a_teaching_step_is_an_adam_step_on_the_selected_examples_only():
    torch.manual_seed(0)
    x = torch.rand(40, 2) * 2 - 1
    y = torch.rand(40, 1)
    net = torch.nn.Linear(2, 1)
    ref = torch.nn.Linear(2, 1)
    ref.load_state_dict(net.state_dict())
    t = Teacher(net, x, y, total=10, ratio=0.25, schedule="constant", lr=1e-2, lr_schedule=None)
    with torch.no_grad():
        top = torch.topk((ref(x) - y).abs().sum(-1), 10).indices
    t.step()
    assert sorted(t.idx.tolist()) == sorted(top.tolist()) and t.n_selected == 10
    opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    torch.mean((ref(x[top]) - y[top]) ** 2).backward()
    opt.step()
    for a, b in zip(net.parameters(), ref.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-7)


def test_full_ratio_trains_on_everything_without_selection():
    net = torch.nn.Linear(2, 1)
    t = Teacher(net, torch.rand(32, 2), torch.rand(32, 1), total=5, ratio=1.0)
    for _ in range(5):
        t.step()
    assert t.selections == 0 and t.n_selected == 32


def test_image_fit_trains_the_models_by_int():
    s = task.make_signal("camera", 16)
    m = zoo.create("int_siren", hidden=16)
    fig = task.fit(m, s, steps=20)
    assert 0 < fig["selections"] < 20 and fig["steps"] == 20  # dense early, then every k steps
    h = teach(zoo.create("int_relu_ff", hidden=4, n_features=8), s.coords, s.values, steps=8)
    assert len(h["losses"]) == 8


def test_quick_reproduction_times_int_against_full_batch():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert set(r.table) == {f"{b} {rule}" for b in ("siren", "relu-ff") for rule in ("full", "int", "random")}
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    assert r.table["relu-ff int"]["params"] == pytest.approx(r.table["siren int"]["params"], rel=0.1)
    for b in ("siren", "relu-ff"):
        full, teach = r.per_seed[f"{b} full"], r.per_seed[f"{b} int"]
        assert full["selections"] == [0, 0] and all(n > 0 for n in teach["selections"])
        # the same initial weights, trained on all pixels vs on the selected ones: different fits
        assert teach["psnr_train"] != full["psnr_train"]
        assert all(-1.0 <= s < 1.0 for s in teach["wall_saving_30db"]) and "wall_saving_30db" not in full
    assert [c["check"] for c in r.checks] == ["siren int wall_saving_30db >= 0.3", "relu-ff int wall_saving_30db >= 0.3"]


def test_pretrained_tag_ships_a_pinned_snapshot_and_its_recipe_resolves():
    from zoo import registry
    from zoo.factory import resolve_target

    w = registry.catalog().models["int_siren"][0].weights["camera"]
    assert (w.repo, w.recipe) == ("zoo-models/int-siren-camera", "zoo_implicit_neural_teaching.train:camera")
    # the recipe's weights ship in the plugin, held to these sha256s; the Hub repo is not published (no commit)
    assert w.revision == "main" and w.snapshot is not None and set(w.files) == {"config.json", "model.safetensors"}
    assert callable(resolve_target(w.recipe))
