"""The numerical data of operator_learn: solvers against exact solutions, convergence, and the data contract."""

from __future__ import annotations

import os

import numpy as np
import pytest

from zoo_task_operator_learn import data


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    # every test writes its data cache to its own folder and starts with an empty in-process cache
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    data._fine.cache_clear()
    yield
    data._fine.cache_clear()


def _u0(x):
    return np.sin(2 * np.pi * x) + 0.5 * np.cos(4 * np.pi * x)  # smooth, zero mean: Cole-Hopf applies


# ----------------------------------------------------------------------------------------------------- Burgers
def test_burgers_matches_cole_hopf_at_the_data_viscosity():
    x = np.arange(512) / 512
    exact = data.burgers_cole_hopf(_u0, x, data.BURGERS_T, nu=data.BURGERS_NU)
    u = data.solve_burgers(_u0(x)[None], steps=data.BURGERS_STEPS)[0]
    assert np.abs(exact).max() > 0.1  # a non-trivial state at T, not a decayed constant
    assert np.abs(u - exact).max() < 1e-6


def test_burgers_converges_in_time_and_space():
    errs = []
    x = np.arange(256) / 256
    exact = data.burgers_cole_hopf(_u0, x, 0.5, nu=0.02)
    for steps in (25, 50, 100):
        errs.append(np.abs(data.solve_burgers(_u0(x)[None], nu=0.02, t_end=0.5, steps=steps)[0] - exact).max())
    assert errs[0] / errs[1] > 6 and errs[1] / errs[2] > 6  # ETDRK4: about 8-16 per halving of the step
    # under-resolved in space (32 points, front width ~0.02): far worse than the converged grid
    x32 = np.arange(32) / 32
    coarse = data.solve_burgers(_u0(x32)[None], nu=0.02, t_end=0.5, steps=100)[0]
    fine = data.solve_burgers(_u0(x)[None], nu=0.02, t_end=0.5, steps=100)[0]
    assert np.abs(coarse - fine[::8]).max() > 100 * np.abs(fine - exact).max()


def test_burgers_dealiasing_keeps_the_energy_bound_when_under_resolved():
    # with the 2/3 rule the quadratic term is exact and then projected (Fourier-Galerkin), so it conserves energy
    # and ||u(t)|| cannot grow even on a grid far too coarse for nu = 1e-4; without it this case blows up
    c = data.burgers_initial_modes(8, data._rng("dealias-test"), modes=10)
    u0 = data._modes_to_grid(c, 48)
    u = data.solve_burgers(u0, nu=1e-4, t_end=0.3, steps=300)
    assert np.isfinite(u).all()
    assert np.all((u ** 2).mean(1) <= (u0 ** 2).mean(1) * (1 + 1e-9))


def test_burgers_data_is_not_trivial():
    d = data.load("burgers", split="test", n=16, resolution=128)
    u = d.u[:, 0].astype(np.float64)
    fluct = np.linalg.norm(u - u.mean(1, keepdims=True)) / np.linalg.norm(u)
    assert fluct > 0.1  # at nu = 0.1 this was 0.03: each function's mean alone would score rel. L2 0.03


# ------------------------------------------------------------------------------------------------------- Darcy
def _grid(cells):
    x = np.arange(cells + 1) / cells
    return np.meshgrid(x, x, indexing="ij")


def test_darcy_manufactured_solution_second_order():
    errs = []
    for cells in (16, 32, 64):
        xx, yy = _grid(cells)
        exact = np.sin(np.pi * xx) * np.sin(np.pi * yy)
        k = np.full_like(xx, 3.0)
        errs.append(np.abs(data.solve_darcy(k, 2 * np.pi ** 2 * 3.0 * exact) - exact).max())
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(rates > 1.9), rates


def test_darcy_constant_k_matches_the_series():
    # -Lap u = 1 on the unit square: u(1/2, 1/2) = sum over odd m, n of 16 sin(m pi/2) sin(n pi/2) / (pi^4 m n (m^2+n^2))
    m = np.arange(1, 400, 2)
    mm, nn = np.meshgrid(m, m, indexing="ij")
    sign = np.sin(mm * np.pi / 2) * np.sin(nn * np.pi / 2)
    centre = (16 * sign / (np.pi ** 4 * mm * nn * (mm ** 2 + nn ** 2))).sum()
    u = data.solve_darcy(np.full((65, 65), 12.0))
    assert abs(u[32, 32] - centre / 12.0) / (centre / 12.0) < 1e-3


def test_darcy_harmonic_faces_and_comparison():
    cells = 32
    xx, yy = _grid(cells)
    k = np.where(xx + 0.3 * yy > 0.6, 12.0, 3.0)
    u = data.solve_darcy(k)
    assert u.min() >= 0 and np.all(u[1:-1, 1:-1] > 0)  # maximum principle with f = 1
    assert np.all(data.solve_darcy(k * 2) <= u + 1e-15)  # larger permeability, smaller solution (u scales as 1/k)
    np.testing.assert_allclose(data.solve_darcy(k * 2), u / 2, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(data.solve_darcy(k.T), u.T, rtol=1e-9, atol=1e-14)  # the stencil is isotropic
    # harmonic face means: a node of tiny permeability (1e-4) insulates its four faces (~2e-4 each), so the source
    # there cannot escape and its value rises ~18-fold; an arithmetic face mean (~0.5) would leave it at ~1x
    k1 = np.ones_like(xx)
    k2 = k1.copy()
    k2[16, 16] = 1e-4
    u1, u2 = data.solve_darcy(k1), data.solve_darcy(k2)
    assert u2[16, 16] > 10 * u1.max()


def test_darcy_coefficient_and_data():
    d = data.load("darcy", n=3, resolution=32)
    assert d.a.shape == d.u.shape == (3, 1, 32, 32) and d.coords.shape == (32, 32, 2)
    assert set(np.unique(d.a)) == {data.DARCY_LOW, data.DARCY_HIGH}
    assert np.all(d.u[:, 0, 0, :] == 0) and np.all(d.u[:, 0, :, 0] == 0)  # the boundary nodes j = 0
    ln = data.load("darcy_lognormal", n=2, resolution=32)
    assert ln.a.min() > 0 and len(np.unique(ln.a)) > 100
    # the same draws at 64 points per axis contain the 32-point grid (node-aligned subsampling)
    d64 = data.load("darcy", n=3, resolution=64)
    np.testing.assert_array_equal(d64.u[..., ::2, ::2], d.u)
    np.testing.assert_array_equal(d64.coords[::2, ::2], d.coords)


def test_darcy_field_is_resolution_independent():
    rng = lambda: data._rng("darcy-field", "train", 0)  # noqa: E731
    g33 = data.darcy_field(2, rng(), np.arange(33) / 32)
    g129 = data.darcy_field(2, rng(), np.arange(129) / 128)
    np.testing.assert_allclose(g129[:, ::4, ::4], g33, atol=1e-12)


# ------------------------------------------------------------------------------------ antiderivative and Poisson
def test_antiderivative_and_poisson_closed_forms():
    alpha, beta = data.smooth_coefficients(4, data._rng("t"))
    x = np.linspace(0, 1, 2001)
    a = data.smooth_eval(alpha, beta, x, "a")
    anti = data.smooth_eval(alpha, beta, x, "antiderivative")
    trap = np.concatenate([np.zeros((4, 1)), np.cumsum((a[:, 1:] + a[:, :-1]) / 2 * np.diff(x), axis=1)], axis=1)
    assert np.abs(anti - trap).max() < 1e-4
    u = data.smooth_eval(alpha, beta, x, "poisson")
    assert np.abs(u[:, 0]).max() < 1e-12 and np.abs(u[:, -1]).max() < 1e-12
    # second-order finite differences of -u'' = a on the interior
    h = x[1] - x[0]
    lap = -(u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2]) / h ** 2
    assert np.abs(lap - a[:, 1:-1]).max() < 1e-3 * np.abs(a).max()


# ---------------------------------------------------------------------------------------------- data contract
@pytest.mark.parametrize("problem", ["burgers", "antiderivative", "poisson"])
def test_same_functions_at_every_resolution_and_n(problem):
    d64 = data.load(problem, n=4, resolution=64)
    d128 = data.load(problem, n=6, resolution=128)
    assert d64.a.dtype == np.float32 and d64.a.shape == (4, 1, 64) and d64.coords.shape == (64, 1)
    np.testing.assert_array_equal(d128.a[:4, :, ::2], d64.a)  # nested grids, and the first n do not depend on n
    np.testing.assert_array_equal(d128.u[:4, :, ::2], d64.u)
    test = data.load(problem, split="test", n=4, resolution=64)
    other = data.load(problem, n=4, resolution=64, seed=1)
    assert not np.allclose(test.a, d64.a) and not np.allclose(other.a, d64.a)


def test_resolution_must_divide_the_fine_grid():
    with pytest.raises(ValueError, match="divide"):
        data.load("burgers", n=2, resolution=100)
    with pytest.raises(ValueError, match="unknown problem"):
        data.load("navier", n=2, resolution=64)


def test_to_points_and_irregular():
    d = data.load("darcy", n=2, resolution=32)
    values, coords, target = data.to_points(d)
    assert values.shape == (2, 32 * 32, 1) and coords.shape == (2, 32 * 32, 2) and target.shape == values.shape
    np.testing.assert_array_equal(values[1, 32 * 5 + 7, 0], d.a[1, 0, 5, 7])
    np.testing.assert_array_equal(coords[0, 32 * 5 + 7], d.coords[5, 7])
    v, c, t = data.irregular("darcy", n=2, n_points=50, seed=0)
    assert v.shape == (2, 50, 1) and c.shape == (2, 50, 2)
    idx = np.rint(c * data.DARCY_FINE).astype(int)
    assert np.all((idx % 2 == 1).any(-1))  # on no coarser grid
    fine = data.load("darcy", split="test", n=2, resolution=data.DARCY_FINE)  # irregular defaults to the test split
    np.testing.assert_array_equal(t[..., 0], fine.u[np.arange(2)[:, None], 0, idx[..., 0], idx[..., 1]])
    v1, c1, t1 = data.irregular("burgers", n=3, n_points=40, seed=0)
    assert c1.shape == (3, 40, 1) and not np.array_equal(c1[0], c1[1])


def test_disk_cache_is_written_atomically_and_reused(monkeypatch):
    first = data.load("antiderivative", n=3, resolution=64)
    folder = data.cache_folder()
    files = [f for f in os.listdir(folder) if f.endswith(".npz")]
    assert len(files) == 1 and not [f for f in os.listdir(folder) if f.endswith(".tmp")]
    with np.load(os.path.join(folder, files[0]), allow_pickle=False) as z:
        assert set(z.files) == {"a", "u"}
    data._fine.cache_clear()
    monkeypatch.setattr(data, "_smooth_fine", lambda *a: (_ for _ in ()).throw(AssertionError("recomputed")))
    again = data.load("antiderivative", n=3, resolution=64)  # read from disk, not recomputed
    np.testing.assert_array_equal(again.u, first.u)


# ------------------------------------------------------------------------------------------ functional regression
def test_function_on_function_response_is_the_integral():
    f = data.functional("function_on_function", n=5, seed=0)
    assert f.samples.shape == (5, 100, 2) and f.mask.shape == (5, 100) and f.y.shape == (5, data.FOF_QUERY, 1)
    counts = f.mask.sum(1)
    assert counts.min() >= 20 and counts.max() <= 100
    t = f.samples[..., 0]
    for i in range(5):
        assert np.all(np.diff(t[i, : counts[i]]) >= 0) and np.all(f.samples[i, counts[i]:] == 0)
    # a brute-force trapezoid on a fine grid of the same curves agrees with the Gauss-Legendre response
    alpha, beta = data.smooth_coefficients(5, data._rng("functional-curves", "function_on_function", "train", 0),
                                           data.FOF_MODES)
    s = np.linspace(0, 1, 20001)
    xs = data.smooth_eval(alpha, beta, s, "a")
    ker = data.fof_kernel(s[None, None, :], f.t_query.astype(np.float64)[..., None])
    brute = np.trapezoid(ker * xs[:, None, :], s, axis=-1)
    np.testing.assert_allclose(f.y_clean[..., 0], brute, atol=1e-5)
    assert 0.02 < np.std(f.y - f.y_clean) < 0.08
    # the sampled values are the dense curve's
    np.testing.assert_allclose(f.samples[0, : counts[0], 1], data.smooth_eval(alpha[:1], beta[:1], t[0, : counts[0]], "a")[0],
                               atol=1e-6)


def test_skewed_sampling_sees_the_same_functions():
    u = data.functional("function_on_function", n=4, sampling="uniform")
    s = data.functional("function_on_function", n=4, sampling="skewed")
    np.testing.assert_array_equal(u.y, s.y)
    np.testing.assert_array_equal(u.x_dense, s.x_dense)
    assert s.samples[..., 0][s.mask].mean() < u.samples[..., 0][u.mask].mean() - 0.1


def test_finer_discretisation_sees_the_same_functions():
    """The 2x test of functional regression: twice the samples (or a twice-as-dense grid) of the same curves."""
    u = data.functional("function_on_function", n=4, split="test")
    f = data.functional("function_on_function", n=4, split="test", n_points=(40, 200))
    np.testing.assert_array_equal(u.y_clean, f.y_clean)
    np.testing.assert_array_equal(u.t_query, f.t_query)
    assert f.mask.sum() > 1.5 * u.mask.sum()
    c = data.functional("scalar_on_function", n=4, split="test")
    c2 = data.functional("scalar_on_function", n=4, split="test", dense_points=2 * data.DENSE_POINTS)
    np.testing.assert_array_equal(c.y_clean, c2.y_clean)
    assert c2.x_dense.shape == (4, 2 * data.DENSE_POINTS)
    np.testing.assert_allclose(c2.x_dense[:, ::255], c.x_dense[:, ::127], atol=1e-6)  # t = 0 and t = 1 on both grids
    with pytest.raises(ValueError, match="dense_points"):
        data.functional("scalar_on_function", n=2, dense_points=1)


def test_scalar_on_function_driver_is_a_small_component():
    f = data.functional("scalar_on_function", n=400, seed=0)
    assert f.y.shape == (400,) and f.x_dense.shape == (400, data.DENSE_POINTS) and f.t_query is None
    t = f.t_dense.astype(np.float64)
    phi = lambda j: np.sqrt(2) * np.sin(np.pi * j * t)  # noqa: E731
    xi = {j: np.trapezoid(f.x_dense * phi(j), t, axis=1) for j in (1, data.SOF_DRIVER)}
    pred = data.SOF_DRIVER * xi[data.SOF_DRIVER] + 0.5 * xi[1]
    assert np.corrcoef(pred, f.y_clean)[0, 1] > 0.99
    # the driver holds ~1% of the first component's variance
    assert np.var(xi[data.SOF_DRIVER]) < 0.03 * np.var(xi[1])
