"""stl-kernel-embed: the conformance kit, the alignment loss's exact cases, and a tiny distillation that must beat
the same encoder untrained on the kernel geometry of held-out formulae."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_stl_kernel_embed.model import CPU, PAPER, alignment_loss, stl_kernel_embed, teacher_kernel
from zoo_task_stl_logic import task
from zoo_task_stl_logic.baselines import build_baseline
from zoo_task_stl_logic.semantics import kernel

TINY = {"dim": 8, "d_model": 16, "heads": 2, "layers": 1}
DATA = {"n_train": 300, "n_test": 60, "n_traj": 100, "n_readout": 40, "n_anchors": 8}


def test_conformance(hub):
    check_plugin("stl-kernel-embed", overrides={"stl_kernel_embed": TINY})


def test_presets_and_overrides():
    assert stl_kernel_embed().arch["d_model"] == CPU["d_model"] and stl_kernel_embed(preset="paper").dim == PAPER["dim"]
    assert zoo.create("stl_kernel_embed", dim=32).dim == 32
    with pytest.raises(ValueError, match="preset"):
        stl_kernel_embed(preset="huge")


def test_alignment_loss_is_zero_exactly_when_the_geometry_is_the_kernels():
    rho = torch.randn(12, 50)
    k = teacher_kernel(rho)
    assert torch.allclose(torch.diagonal(k), torch.ones(12)) and torch.allclose(k, k.T)
    assert float(alignment_loss(rho, k)) < 1e-10  # embedding = robustness vector: cosine = kernel
    assert float(alignment_loss(rho @ torch.linalg.qr(torch.randn(50, 50))[0], k)) < 1e-10  # rotation invariant
    assert float(alignment_loss(torch.randn(12, 50), k)) > 0.01


def test_the_loss_weights_each_pair_by_the_teachers_discrepancy():
    torch.manual_seed(0)
    z, k = torch.randn(5, 3), teacher_kernel(torch.randn(5, 7))
    s = torch.nn.functional.cosine_similarity(z[:, None], z[None], dim=-1)
    off = ~torch.eye(5, dtype=torch.bool)
    w = 1 + (1 - k) / 2
    want = (w * (s - k) ** 2)[off].sum() / w[off].sum()
    assert float(alignment_loss(z, k)) == pytest.approx(float(want), rel=1e-5)
    assert float(alignment_loss(z, k, 0.0)) == pytest.approx(float(((s - k) ** 2)[off].mean()), rel=1e-5)


def test_a_short_distillation_makes_cosine_track_the_kernel_where_the_untrained_encoder_does_not():
    # in-sample: 200 formulae are too few to generalise in a test's budget (the reproduction measures held-out
    # formulae); what this checks is that the loss drives embedding geometry towards the kernel's
    d = task.dataset(0, **DATA)
    ids, rho = d.ids_train[:200], d.rho_train[:200]
    k = kernel(rho, rho)
    iu = np.triu_indices(200, 1)

    def spearman(m):
        z, _ = task._encode(m, ids)
        return task.spearman(task.cosine_matrix(z)[iu], k[iu])

    torch.manual_seed(0)
    model = stl_kernel_embed(dim=16, d_model=32, heads=2, layers=1, batch_size=64, lr=5e-3)
    untrained = build_baseline("random_encoder", seed=0, arch=model.arch)
    fig = model.fit(ids, rho, steps=120, seed=0)
    base, ours = spearman(untrained), spearman(model)
    assert ours > 0.5 and ours > base + 0.3, (fig, ours, base)
