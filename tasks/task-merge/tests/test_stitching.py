"""task_merge mode "stitching": the baselines' exact invariances, the transformations, the metrics, a small run."""
from __future__ import annotations

import pytest
import torch

from zoo.task import torch_threads
from zoo_task_task_merge import stitching as S


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):  # tiny models on a shared machine: more threads only contend
        yield


def _orthogonal(d: int, seed: int) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def test_cosine_baseline_is_invariant_to_rotation_and_scale_not_translation():
    z = torch.randn(30, 8, dtype=torch.float64)
    a = z[:5]
    cos, q = S.build_baseline("cosine"), _orthogonal(8, 0)
    assert torch.allclose(cos(2.5 * z @ q, 2.5 * a @ q), cos(z, a), atol=1e-12)
    assert not torch.allclose(cos(z + 3.0, a + 3.0), cos(z, a), atol=1e-2)
    absolute = S.build_baseline("absolute")
    assert torch.equal(absolute(z, a), z)


def test_transformations_preserve_what_they_claim():
    g = torch.Generator().manual_seed(0)
    z = {"train": torch.randn(50, 6, generator=g), "test": torch.randn(20, 6, generator=g)}
    assert S.transform_latents("seed", z, 0) is z and S.transform_latents("arch", z, 0) is z
    ang = S.transform_latents("scale_rotate", z, 1)
    cos = torch.nn.functional.cosine_similarity
    assert torch.allclose(cos(ang["train"][:-1], ang["train"][1:]), cos(z["train"][:-1], z["train"][1:]), atol=1e-5)
    assert torch.allclose(ang["test"].norm(dim=1), S.SCALE * z["test"].norm(dim=1), rtol=1e-5)
    for setting in ("translate", "isometry"):
        out = S.transform_latents(setting, z, 1)
        assert torch.allclose(torch.cdist(out["train"], out["test"]), torch.cdist(z["train"], z["test"]), atol=1e-4)
        moved = (out["train"].mean(0) - z["train"].mean(0)).norm() if setting == "translate" else None
        if moved is not None:
            assert torch.isclose(moved, S.SHIFT * z["train"].norm(dim=1).mean(), rtol=1e-5)
    again = S.transform_latents("isometry", z, 1)
    assert torch.equal(again["test"], S.transform_latents("isometry", z, 1)["test"])  # seeded
    with pytest.raises(ValueError, match="setting"):
        S.transform_latents("shear", z, 0)


def test_similarity_metrics_known_answers():
    x = torch.randn(64, 10)
    same = S.similarity_metrics(x, 2.0 * x - 1.0)  # centring removes the offset, cosine the scale
    assert same == pytest.approx({"latent_similarity": 1.0, "latent_top1": 1.0, "latent_cka": 1.0}, abs=1e-5)
    other = S.similarity_metrics(x, torch.randn(64, 10))
    assert abs(other["latent_similarity"]) < 0.15 and other["latent_top1"] < 0.2
    q = _orthogonal(10, 3).float()
    assert S.similarity_metrics(x, x @ q)["latent_cka"] == pytest.approx(1.0, abs=1e-5)  # CKA ignores rotations
    assert "latent_similarity" not in S.similarity_metrics(x, x[:, :4])  # no row-wise cosine across widths


def test_anchor_set_is_fixed_and_validated():
    assert torch.equal(S.anchor_indices(100, 8), S.anchor_indices(100, 8))
    assert len(set(S.anchor_indices(100, 8).tolist())) == 8
    with pytest.raises(ValueError, match="n_anchors"):
        S.anchor_indices(10, 11)


def test_score_on_rotated_clusters_cosine_stitches_absolute_does_not():
    g = torch.Generator().manual_seed(0)
    centers = torch.randn(10, 8, generator=g) * 3
    y = torch.randint(0, 10, (500,), generator=g)
    z = centers[y] + torch.randn(500, 8, generator=g)
    q = _orthogonal(8, 1).float()
    sp = {"A": {"train": z[:400], "test": z[400:]}, "B": {"train": z[:400] @ q, "test": z[400:] @ q},
          "y_train": y[:400], "y_test": y[400:]}
    cos = S.score(S.build_baseline("cosine"), sp, n_anchors=20, steps=80, seed=0)
    ab = S.score(S.build_baseline("absolute"), sp, n_anchors=20, steps=80, seed=0)
    assert cos["within_acc"] > 0.8 and abs(cos["stitch_acc"] - cos["within_acc"]) < 1e-9  # identical projections
    assert cos["latent_similarity"] == pytest.approx(1.0, abs=1e-5)
    assert ab["within_acc"] > 0.8 and ab["stitch_acc"] < ab["within_acc"] - 0.3
    assert cos["dim"] == 20 and ab["dim"] == 8


def test_run_on_digits_and_option_errors():
    res = S.run(S.build_baseline("cosine"), seed=0, steps=100, setting="seed", n_anchors=16, baselines=["absolute"])
    assert set(res.baselines) == {"absolute"} and res.n == 450
    m = res.metrics
    assert m["enc_acc_a"] > 0.85 and m["enc_acc_b"] > 0.85  # the encoders learned the digits
    assert 0.0 <= m["stitch_acc"] <= 1.0 and m["within_acc"] > 0.5
    with pytest.raises(ValueError, match="unknown option"):
        S.run(S.build_baseline("cosine"), settings="seed")
    with pytest.raises(ValueError, match="baseline"):
        S.run(S.build_baseline("cosine"), baselines=["procrustes"])
    with pytest.raises(ValueError, match="dataset"):
        S.run(S.build_baseline("cosine"), dataset="cifar10")
    with pytest.raises(ValueError, match="project"):
        S.score(lambda z, a: z[:, :0].sum(1), S.spaces("seed", 0), n_anchors=4, steps=1)
