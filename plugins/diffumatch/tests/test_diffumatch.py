"""diffumatch: the conformance kit, the SDS regulariser's exact gradient, the |C| representation, and a trained prior
that denoises held-out maps, prefers ground-truth maps to random orthogonal ones and helps matching."""
from __future__ import annotations

import pytest
import torch

from zoo.testing import check_plugin
from zoo_diffumatch.model import PAPER, diffumatch_prior
from zoo_task_shape_match import data, fmaps, task
from zoo_task_shape_match.baselines import LapOrtho, Ortho

TINY = {"dim": 16, "depth": 1, "heads": 2}


def test_conformance(hub):
    check_plugin("diffumatch", overrides={"diffumatch_prior": TINY})


def test_presets_and_arguments():
    paper = diffumatch_prior("paper")
    assert (paper.k, paper.n_noise, len(paper.blocks), paper.embed.out_features) == (30, PAPER["n_noise"], 12, 384)
    assert diffumatch_prior(n_noise=7).n_noise == 7
    with pytest.raises(ValueError, match="preset"):
        diffumatch_prior("huge")
    with pytest.raises(ValueError, match="multiple of patch"):
        diffumatch_prior(patch=4)


def test_regulariser_gradient_is_the_score_distillation_gradient():
    torch.manual_seed(0)
    prior = diffumatch_prior(**TINY)
    for p in prior.parameters():  # a non-trivial denoiser (adaLN-Zero starts as the identity map)
        torch.nn.init.normal_(p, std=0.2)
    C = torch.randn(3, 30, 30, requires_grad=True)
    value = prior.regularizer(C, generator=torch.Generator().manual_seed(5))
    value.sum().backward()
    g = prior.sds_gradient(C.detach().abs(), generator=torch.Generator().manual_seed(5))
    assert g.abs().mean() > 1e-3
    assert torch.allclose(C.grad, g * C.detach().sign(), atol=1e-5)  # no gradient through the denoiser
    assert torch.allclose(value, 0.5 * g.pow(2).sum((1, 2)), rtol=1e-5)


def test_the_prior_sees_magnitudes_only_unlike_the_axiomatic_terms():
    prior = diffumatch_prior(**TINY)
    C, ev_x, ev_y = task.example_input(prior)
    signs = torch.randint(0, 2, C.shape, generator=torch.Generator().manual_seed(1)).float() * 2 - 1
    assert torch.equal(prior(C, ev_x, ev_y), prior(C * signs, ev_x, ev_y))  # entry-wise sign flips: invisible
    assert not torch.allclose(Ortho()(C, ev_x, ev_y), Ortho()(C * signs, ev_x, ev_y))
    assert not torch.allclose(LapOrtho()(C, ev_x, ev_y), LapOrtho()(C * signs, ev_x, ev_y))


@pytest.fixture(scope="module")
def trained():
    """A tiny prior trained by the task's loop on ground-truth maps of one training category."""
    torch.manual_seed(0)
    prior = diffumatch_prior(dim=32, depth=1, heads=4)
    maps = task.training_maps(("ellipsoid",), n_train=6, seed=0)
    info = task._train(prior, maps, steps=100, budget_s=None, batch_size=32, lr=3e-3, seed=0, progress=False)
    return prior, info


def _held_out_maps():
    s = data.shape_set("bumpy", "test", 3, seed=0)
    return fmaps.gt_maps(s, data.pairs(3, None, seed=0))


def test_training_denoises_held_out_maps(trained):
    prior, info = trained
    x = _held_out_maps().abs()
    gen = torch.Generator().manual_seed(0)
    sigma = torch.full((len(x),), 0.2)
    noisy = x + 0.2 * torch.randn(x.shape, generator=gen)
    with torch.no_grad():
        after = (prior.denoise(noisy, sigma) - x).norm()
        untrained = (diffumatch_prior(dim=32, depth=1, heads=4).denoise(noisy, sigma) - x).norm()
    before = (noisy - x).norm()
    assert untrained == pytest.approx(before)  # adaLN-Zero: an untrained denoiser is the identity
    assert after < 0.6 * before  # a bumpy sphere's maps were never seen: the prior transfers across categories


def test_trained_regulariser_prefers_ground_truth_to_random_orthogonal_maps(trained):
    prior, _ = trained
    gt = _held_out_maps()
    q, _ = torch.linalg.qr(torch.randn(gt.shape, generator=torch.Generator().manual_seed(0)))
    ev = torch.linspace(0, 350, 30).expand(len(gt), 30)
    prior.n_noise = 16  # more draws per call: a steadier estimate of the SDS residual
    try:
        with torch.no_grad():
            on_gt, on_random = prior(gt, ev, ev), prior(q, ev, ev)
    finally:
        prior.n_noise = 2
    assert bool((on_gt < on_random).all()) and float(on_gt.mean()) < 0.8 * float(on_random.mean())
    assert torch.allclose(Ortho()(q, ev, ev), torch.zeros(len(q)), atol=1e-3)  # orthogonality cannot tell them apart


def test_quick_matching_with_the_trained_prior_beats_no_regulariser(trained):
    prior, _ = trained
    r = task.evaluate(prior, seed=0, steps=0, n_val=2, n_test=3, val_pairs=2, test_pairs=3, solver_steps=40,
                      baselines=["none"])
    assert "training" not in r.config  # steps=0: the prior is used as trained above
    assert r.metrics["error"] < r.baselines["none"]["error"] - 0.02 and r.metrics["weight"] > 0
