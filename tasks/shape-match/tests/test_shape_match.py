"""shape_match: the spectral geometry, the planted correspondence, the axiomatic regularisers, the seeded cache and
an evaluation whose numbers separate the baselines."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo_task_shape_match import data, fmaps, shapes, spectral, task
from zoo_task_shape_match.baselines import LapOrtho, NoRegularizer, Ortho, build_baseline


def _rotation(seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return q


@pytest.mark.parametrize("category", shapes.CATEGORIES)
def test_eigenbasis_is_orthonormal_under_the_mass_and_starts_constant(category):
    verts, faces = shapes.instance(category, np.random.default_rng(0))
    evals, evecs, mass = spectral.eigenpairs(verts, faces, k=30)
    assert np.abs(evecs.T @ (mass[:, None] * evecs) - np.eye(30)).max() < 1e-8
    assert abs(evals[0]) < 1e-8 and np.all(np.diff(evals) >= 0) and evals[1] > 1
    assert np.std(evecs[:, 0]) < 1e-6 * abs(evecs[:, 0]).mean()  # the constant function
    assert mass.sum() == pytest.approx(1.0)  # unit area


def test_gt_map_of_an_isometry_is_diagonal_signs_with_zero_commutativity():
    verts, faces = shapes.instance("superquadric", np.random.default_rng(3))
    ex, phx, mx = spectral.eigenpairs(verts, faces, k=20)
    ey, phy, my = spectral.eigenpairs(verts @ _rotation(1).T + 0.3, faces, k=20)
    C = torch.as_tensor(phy.T @ (my[:, None] * phx), dtype=torch.float32)[None]
    assert torch.allclose(C.abs(), torch.eye(20)[None], atol=1e-3)  # +-1 on the diagonal, 0 elsewhere
    evx, evy = torch.as_tensor(ex, dtype=torch.float32)[None], torch.as_tensor(ey, dtype=torch.float32)[None]
    assert float(fmaps.commutativity(C, evx, evy)) < 1e-6 and float(fmaps.orthogonality(C)) < 1e-4


def test_a_deformation_is_smooth_and_not_isometric():
    rng = np.random.default_rng(0)
    verts, faces = shapes.base_shape("ellipsoid", rng)
    moved = shapes.deform(verts, rng)
    edge = lambda v: np.linalg.norm(v[faces[:, 0]] - v[faces[:, 1]], axis=1)  # noqa: E731
    stretch = np.abs(edge(moved) / edge(verts) - 1)
    assert 0.05 < stretch.mean() < 0.2  # documented in shapes: about 12% on average
    neighbours = np.abs(np.diff((moved - verts)[faces[:, :2]], axis=1)).max()
    assert neighbours < 0.15 < np.abs(moved - verts).max()  # adjacent vertices move together: a smooth field


def test_shape_sets_are_seeded_cached_and_disjoint(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path))
    data.shape_set.cache_clear()
    a = data.shape_set("torus", "test", 2, seed=5, geodesic=True)
    files = list((tmp_path / "shape_match").glob("*.npz"))
    assert len(files) == 1
    with np.load(files[0], allow_pickle=False) as z:
        assert np.array_equal(z["evecs"], a.evecs) and z["geodesic"].dtype == np.float16
    data.shape_set.cache_clear()
    again = data.shape_set("torus", "test", 2, seed=5, geodesic=True)  # read back from disk
    assert np.array_equal(again.verts, a.verts) and a.geodesic.max() == pytest.approx(1.0, abs=1e-3)
    other = data.shape_set("torus", "val", 2, seed=5)
    assert not np.allclose(other.verts, a.verts) and other.geodesic is None
    assert a.verts.shape == (2, 450, 3) and a.evecs.shape == (2, 450, data.K) and a.desc.shape[2] == 52
    with pytest.raises(ValueError, match="choose from"):
        data.shape_set("cube", "test", 2, seed=0)


def test_ground_truth_maps_match_almost_perfectly_and_random_maps_do_not():
    s = data.shape_set("bumpy", "test", 3, seed=0, geodesic=True)
    pairs = data.pairs(3, None, seed=0)
    gt = fmaps.gt_maps(s, pairs)
    assert fmaps.match_errors(s, pairs, gt).max() < 0.02
    rand = torch.randn(gt.shape, generator=torch.Generator().manual_seed(0)) / data.K ** 0.5
    assert fmaps.match_errors(s, pairs, rand).mean() > 0.25


def test_regularisers_penalise_what_they_should():
    ev = torch.linspace(0, 300, 10)[None]
    eye = torch.eye(10)[None]
    mixing = eye[:, [1, 0, *range(2, 10)]]  # swaps two eigenfunctions with different eigenvalues: orthogonal
    assert float(Ortho()(mixing, ev, ev)) == 0.0 and float(LapOrtho(lap=1.0)(mixing, ev, ev)) > 0.0
    assert float(LapOrtho()(eye, ev, ev)) == 0.0 and float(Ortho()(2 * eye, ev, ev)) == pytest.approx(90.0)
    assert float(NoRegularizer()(torch.randn(1, 10, 10), ev, ev)) == 0.0
    assert build_baseline("lap_ortho", lap=3.0).lap == 3.0
    with pytest.raises(ValueError, match="choose from"):
        build_baseline("commutativity")


def test_evaluate_separates_the_baselines_and_checks_its_arguments():
    kw = dict(n_val=2, n_test=3, val_pairs=2, test_pairs=3, solver_steps=60, seed=0)
    r = task.evaluate(NoRegularizer(), baselines=["lap_ortho"], **kw)
    assert r.metrics["floor"] < 0.03 and r.n == 6
    assert r.baselines["lap_ortho"]["error"] < r.metrics["error"] - 0.03  # regularising helps on held-out shapes
    assert set(r.metrics) >= {"error", "error_bumpy", "error_superquadric", "error_val", "weight"}
    with pytest.raises(ValueError, match="zero-shot"):
        task.evaluate(NoRegularizer(), train_categories=("bumpy",), **kw)
    with pytest.raises(ValueError, match="unknown baseline"):
        task.evaluate(NoRegularizer(), baselines=["gt"], **kw)
    with pytest.raises(TypeError, match="regularizer"):
        task.evaluate(torch.nn.Linear(2, 2), **kw)


def test_contract_helpers_and_describe():
    x = task.example_input()
    out = LapOrtho()(*x)
    task.check_output(LapOrtho(), out)
    with pytest.raises(AssertionError, match="finite"):
        task.check_output(LapOrtho(), out[:1])
    d = task.describe(steps=7)
    assert d["prior_training"]["steps"] == 7 and d["spectral"]["k"] == 30
    with pytest.raises(ValueError, match="unknown option"):
        task.describe(k=10)
