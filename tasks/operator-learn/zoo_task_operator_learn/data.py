"""Data of ``operator_learn``: numerical solvers (numpy/scipy, float64 inside, float32 out), seeded and cached.

Problems (``load(problem, ...)``), each a map from an input function ``a`` to a solution ``u``:

``"burgers"``
    1D viscous Burgers ``u_t + (u^2/2)_x = nu u_xx`` on the periodic ``[0, 1)``, ``a = u(., 0)``,
    ``u = u(., T = 1)``, ``nu = 0.01``. Deviation: the FNO paper (Li et al. 2021, section 5.1) states
    ``nu = 0.1``, but on ``[0, 1)`` that damps the first mode by ``exp(-0.1 (2 pi)^2) = 0.02`` before ``T = 1``:
    the solutions are nearly constant (their spatial fluctuation is ~3% of their norm, so predicting each
    function's mean scores rel. L2 0.03); at ``nu = 0.01`` it is ~18% with steepening fronts that a 512-point
    spectral grid still resolves to round-off. Initial conditions are the paper's ``N(0, 625 (-Laplacian + 25
    I)^-2)`` truncated to its first ``BURGERS_MODES`` Fourier modes (the dropped tail holds ~1e-8 of the variance).
    Solved pseudo-spectrally on ``BURGERS_SOLVE = 512`` points with ETDRK4 (Cox-Matthews; coefficients by the
    Kassam-Trefethen contour integral, so the diffusion is integrated exactly), 2/3-rule dealiasing,
    ``BURGERS_STEPS = 400`` steps (max error ~3e-6 against 800 steps); the solution's spectrum is at round-off well
    below the dealiasing cut, so its trigonometric interpolant on the ``BURGERS_FINE = 1024``-point fine grid is
    the same function (checked against solving at 1024 points: same error). Grid ``x_j = j/s``.
``"darcy"`` / ``"darcy_lognormal"``
    2D Darcy ``-div(k grad u) = 1`` on ``[0, 1]^2``, ``u = 0`` on the boundary. ``"darcy"``: ``k = 12`` where a
    Gaussian field ``g ~ N(0, (-Laplacian + 9 I)^-2)`` (Neumann cosine modes, first ``DARCY_MODES`` per axis) is
    ``>= 0`` and ``3`` elsewhere, as in the FNO data; ``"darcy_lognormal"``: ``k = exp(g / sd)`` with ``sd`` the
    field's mean pointwise standard deviation. The coefficient is a function on the square (the same modes at
    every grid), evaluated at the nodes ``i/S`` of the fine grid (``DARCY_FINE = 128`` cells); 5-point finite
    differences with the harmonic mean of ``k`` on each face, sparse LU per sample. A resolution ``s`` dividing
    ``S`` keeps every ``S/s``-th fine node, ``x_j = j/s`` for ``j < s`` (node-aligned and nested, like the 1D
    problems; the row/column ``j = 0`` lies on the boundary where ``u = 0``, the far boundary ``x = 1`` is left out).
``"antiderivative"``
    ``u(x) = int_0^x a``; ``"poisson"``: ``-u'' = a`` on ``[0, 1]`` with ``u(0) = u(1) = 0``. ``a`` is a random
    trigonometric polynomial (``SMOOTH_MODES`` modes, standard deviation ``(1 + k)^-1.5``), so both solutions are
    closed forms, exact at any point.

Every problem's functions depend only on ``(problem, split, seed, index)``: the same draw is the same function at
every resolution (solved on the fine grid, then subsampled), so a test at twice the training resolution is
zero-shot super-resolution on the same functions, and the first ``n`` functions do not depend on ``n``.
Train and test splits use disjoint random streams.

Functional-regression data (``functional(kind, ...)``), see its docstring.

Caching: the fine arrays are kept in-process (``functools.lru_cache``) and on disk as ``.npz`` (read with
``allow_pickle=False``) under ``<zoo cache>/operator_learn``, keyed by a hash of every argument and ``DATA_VERSION``,
written through ``zoo.fileio.atomic_path``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os

import numpy as np

from zoo.fileio import cached_arrays

DATA_VERSION = 2
PROBLEMS = ("burgers", "darcy", "darcy_lognormal", "antiderivative", "poisson")
SPLITS = ("train", "test")
BURGERS_NU = 0.01
BURGERS_T = 1.0
BURGERS_FINE = 1024
BURGERS_STEPS = 400
BURGERS_SOLVE = 512
BURGERS_MODES = 64
DARCY_FINE = 128
DARCY_MODES = 32
DARCY_HIGH, DARCY_LOW = 12.0, 3.0
SMOOTH_FINE = 1024
SMOOTH_MODES = 16
_DIM = {"burgers": 1, "darcy": 2, "darcy_lognormal": 2, "antiderivative": 1, "poisson": 1}
_FINE = {"burgers": BURGERS_FINE, "darcy": DARCY_FINE, "darcy_lognormal": DARCY_FINE,
         "antiderivative": SMOOTH_FINE, "poisson": SMOOTH_FINE}


@dataclasses.dataclass(frozen=True)
class OperatorData:
    """One split of a problem at one resolution.

    ``a``: inputs ``(n, C_in, *grid)`` float32; ``u``: solutions ``(n, C_out, *grid)`` float32; ``coords``:
    ``(*grid, d)`` float32 in ``[0, 1)`` (``coords[..., 0]`` is the first grid axis).
    """

    problem: str
    split: str
    seed: int
    resolution: int
    a: np.ndarray
    u: np.ndarray
    coords: np.ndarray

    @property
    def n(self) -> int:
        return int(self.a.shape[0])


# ----------------------------------------------------------------------------------------------------------- seeds
def _rng(*key) -> np.random.Generator:
    # a stream per (purpose, problem, split, seed): stable across numpy versions (SeedSequence of integers)
    words = [int.from_bytes(hashlib.sha256(str(k).encode()).digest()[:4], "little") if isinstance(k, str) else int(k)
             for k in key]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def _check(problem: str, split: str) -> None:
    if problem not in PROBLEMS:
        raise ValueError(f"unknown problem {problem!r}; expected one of {PROBLEMS}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")


# --------------------------------------------------------------------------------------------------------- Burgers
def burgers_initial_modes(n: int, rng: np.random.Generator, modes: int = BURGERS_MODES) -> np.ndarray:
    """Fourier coefficients ``(n, modes + 1)`` (complex, ``c_0`` real) of ``N(0, 625 (-Lap + 25 I)^-2)`` draws.

    ``u(x) = c_0 + 2 Re sum_k c_k exp(2 pi i k x)``; the standard deviation of each real basis coefficient
    (``1``, ``sqrt 2 cos``, ``sqrt 2 sin``, orthonormal on ``[0, 1)``) is ``25 / ((2 pi k)^2 + 25)``.
    """
    k = np.arange(1, modes + 1)
    sd = 25.0 / ((2 * np.pi * k) ** 2 + 25.0)
    z = rng.standard_normal((n, 2 * modes + 1))
    c = np.zeros((n, modes + 1), complex)
    c[:, 0] = z[:, 0]
    # sqrt2 (A cos + B sin) = 2 Re((A - iB)/sqrt2 e^{i theta})
    c[:, 1:] = sd * (z[:, 1:modes + 1] - 1j * z[:, modes + 1:]) / np.sqrt(2)
    return c


def _modes_to_grid(c: np.ndarray, n_points: int) -> np.ndarray:
    from scipy.fft import irfft

    spec = np.zeros(c.shape[:-1] + (n_points // 2 + 1,), complex)
    m = min(c.shape[-1], n_points // 2)
    spec[..., :m] = c[..., :m] * n_points
    return irfft(spec, n=n_points, axis=-1)


def _etdrk4_coefficients(lin: np.ndarray, h: float, contour: int = 64):
    # phi-functions of h*L by the mean over a circle around each h*L (Kassam & Trefethen 2005): no cancellation
    r = np.exp(2j * np.pi * (np.arange(contour) + 0.5) / contour)
    lr = h * lin[:, None] + r[None, :]
    e = np.exp(lr)
    q = h * np.real(np.mean((np.exp(lr / 2) - 1) / lr, axis=1))
    f1 = h * np.real(np.mean((-4 - lr + e * (4 - 3 * lr + lr ** 2)) / lr ** 3, axis=1))
    f2 = h * np.real(np.mean((2 + lr + e * (-2 + lr)) / lr ** 3, axis=1))
    f3 = h * np.real(np.mean((-4 - 3 * lr - lr ** 2 + e * (4 - lr)) / lr ** 3, axis=1))
    return np.exp(h * lin), np.exp(h * lin / 2), q, f1, f2, f3


def solve_burgers(u0: np.ndarray, *, nu: float = BURGERS_NU, t_end: float = BURGERS_T, steps: int = BURGERS_STEPS,
                  chunk: int = 256) -> np.ndarray:
    """``u(., t_end)`` for initial values ``u0`` ``(n, N)`` on ``x_j = j/N`` (periodic), float64.

    Pseudo-spectral, ETDRK4 with the diffusion integrated exactly, 2/3-rule dealiasing of the quadratic term.
    """
    from scipy.fft import irfft, rfft

    u0 = np.atleast_2d(np.asarray(u0, np.float64))
    n_pts = u0.shape[-1]
    k = np.arange(n_pts // 2 + 1)
    wav = 2 * np.pi * k
    keep = k < n_pts / 3
    e, e2, q, f1, f2, f3 = _etdrk4_coefficients(-nu * wav ** 2, t_end / steps)
    g = -0.5j * wav * keep

    def nonlinear(v):
        w = irfft(v, n=n_pts, axis=-1)
        return g * rfft(w * w, axis=-1)

    out = np.empty_like(u0)
    for lo in range(0, u0.shape[0], chunk):  # chunks keep the working set in cache
        v = rfft(u0[lo:lo + chunk], axis=-1) * keep
        for _ in range(steps):
            nv = nonlinear(v)
            a = e2 * v + q * nv
            na = nonlinear(a)
            b = e2 * v + q * na
            nb = nonlinear(b)
            c = e2 * a + q * (2 * nb - nv)
            nc = nonlinear(c)
            v = e * v + nv * f1 + 2 * (na + nb) * f2 + nc * f3
        out[lo:lo + chunk] = irfft(v, n=n_pts, axis=-1)
    return out


def burgers_cole_hopf(u0_fn, x: np.ndarray, t: float, *, nu: float = BURGERS_NU, n_fine: int = 4096) -> np.ndarray:
    """Exact solution by Cole-Hopf for a smooth zero-mean periodic ``u0`` (a callable on ``[0, 1)``).

    ``u = -2 nu phi_x / phi`` with ``phi_t = nu phi_xx`` and ``phi_0 = exp(-1/(2 nu) int_0^x u0)``; the heat
    equation is solved exactly in Fourier space (``phi_0`` is analytic, so ``n_fine`` modes reach round-off).
    """
    from scipy.fft import fft, ifft

    xf = np.arange(n_fine) / n_fine
    kf = np.fft.fftfreq(n_fine, 1.0 / n_fine)
    u0f = fft(u0_fn(xf))
    if abs(u0f[0].real) / n_fine > 1e-12:
        raise ValueError("Cole-Hopf reference needs a zero-mean initial condition (periodic phi)")
    ik = 2j * np.pi * kf
    with np.errstate(divide="ignore", invalid="ignore"):
        prim_hat = np.where(kf == 0, 0.0, u0f / ik)
    prim = np.real(ifft(prim_hat))
    prim = prim - prim[0]  # int_0^x u0
    phi_hat = fft(np.exp(-prim / (2 * nu))) * np.exp(-nu * (2 * np.pi * kf) ** 2 * t)
    # evaluate phi and phi_x at x from the Fourier series (exact interpolation of the band-limited phi)
    ph = phi_hat / n_fine
    basis = np.exp(2j * np.pi * np.outer(np.asarray(x, np.float64), kf))
    phi = np.real(basis @ ph)
    dphi = np.real(basis @ (ik * ph))
    return -2 * nu * dphi / phi


def _burgers_fine(split: str, n: int, seed: int, fine: int) -> tuple[np.ndarray, np.ndarray]:
    c = burgers_initial_modes(n, _rng("burgers-ic", split, seed))
    u_end = solve_burgers(_modes_to_grid(c, BURGERS_SOLVE))
    if fine < BURGERS_SOLVE:
        if BURGERS_SOLVE % fine:
            raise ValueError(f"a burgers fine grid below {BURGERS_SOLVE} points must divide it, got {fine}")
        u_end = u_end[:, :: BURGERS_SOLVE // fine]
    return _modes_to_grid(c, fine), _interp(u_end, fine)


def _interp(u: np.ndarray, n_points: int) -> np.ndarray:
    # trigonometric interpolation of a periodic grid function (band-limited: exact) onto n_points points
    from scipy.fft import rfft

    return u if u.shape[-1] == n_points else _modes_to_grid(rfft(u, axis=-1) / u.shape[-1], n_points)


# ----------------------------------------------------------------------------------------------------------- Darcy
def darcy_field(n: int, rng: np.random.Generator, x: np.ndarray, modes: int = DARCY_MODES) -> np.ndarray:
    """``(n, len(x), len(x))`` draws of ``N(0, (-Lap + 9 I)^-2)`` with Neumann cosine modes, at the nodes ``x``.

    ``g = sum_{k, l < modes} z_kl e_k(x) e_l(y) / (pi^2 (k^2 + l^2) + 9)`` with ``e_0 = 1``, ``e_k = sqrt2 cos(pi k x)``.
    """
    k = np.arange(modes)
    sd = 1.0 / (np.pi ** 2 * (k[:, None] ** 2 + k[None, :] ** 2) + 9.0)
    z = rng.standard_normal((n, modes, modes)) * sd
    basis = np.cos(np.pi * np.outer(x, k)) * np.where(k == 0, 1.0, np.sqrt(2.0))
    return np.einsum("ik,nkl,jl->nij", basis, z, basis, optimize=True)


def _darcy_field_sd(modes: int = DARCY_MODES) -> float:
    k = np.arange(modes)
    var = 1.0 / (np.pi ** 2 * (k[:, None] ** 2 + k[None, :] ** 2) + 9.0) ** 2
    return float(np.sqrt(var.sum()))  # the mean over the square of the pointwise variance (orthonormal basis)


@functools.lru_cache(maxsize=8)
def _darcy_pattern(cells: int) -> tuple[np.ndarray, np.ndarray]:
    # rows/cols of the interior 5-point operator, in the order solve_darcy lists its values
    idx = np.arange((cells - 1) ** 2).reshape(cells - 1, cells - 1)
    pairs = [(idx, idx), (idx[:-1, :], idx[1:, :]), (idx[1:, :], idx[:-1, :]), (idx[:, :-1], idx[:, 1:]),
             (idx[:, 1:], idx[:, :-1])]
    return np.concatenate([r.ravel() for r, _ in pairs]), np.concatenate([c.ravel() for _, c in pairs])


def solve_darcy(k: np.ndarray, f: float | np.ndarray = 1.0) -> np.ndarray:
    """Solution ``(S+1, S+1)`` of ``-div(k grad u) = f``, ``u = 0`` on the boundary, on the nodes ``i/S`` of [0,1]^2.

    ``k`` (and an array ``f``) are given at those nodes, ``(S+1, S+1)``, axis 0 is x. Five-point finite
    differences; the flux through a face uses the harmonic mean of ``k`` at its two nodes. Float64.
    """
    from scipy.sparse import csc_matrix
    from scipy.sparse.linalg import splu

    k = np.asarray(k, np.float64)
    cells = k.shape[0] - 1
    h = 1.0 / cells
    kx = 2 * k[1:, :] * k[:-1, :] / (k[1:, :] + k[:-1, :])  # face between (i, j) and (i+1, j): (S, S+1)
    ky = 2 * k[:, 1:] * k[:, :-1] / (k[:, 1:] + k[:, :-1])  # face between (i, j) and (i, j+1): (S+1, S)
    east, west = kx[1:, 1:-1], kx[:-1, 1:-1]  # faces of interior node (i, j), i, j = 1..S-1
    north, south = ky[1:-1, 1:], ky[1:-1, :-1]
    rows, cols = _darcy_pattern(cells)
    vals = np.concatenate([(east + west + north + south).ravel(), -east[:-1, :].ravel(), -west[1:, :].ravel(),
                           -north[:, :-1].ravel(), -south[:, 1:].ravel()])
    m = cells - 1
    mat = csc_matrix((vals / h ** 2, (rows, cols)), shape=(m * m, m * m))
    rhs = np.broadcast_to(np.asarray(f, np.float64), k.shape)[1:-1, 1:-1].ravel()
    u = np.zeros_like(k)
    # minimum degree on A^T + A: about half the fill of the default COLAMD on this symmetric pattern
    u[1:-1, 1:-1] = splu(mat, permc_spec="MMD_AT_PLUS_A").solve(np.ascontiguousarray(rhs)).reshape(m, m)
    return u


def darcy_coefficient(problem: str, split: str, n: int, seed: int, fine: int) -> np.ndarray:
    """The permeability of draws ``0..n-1`` at the nodes ``i/fine``, ``(n, fine+1, fine+1)`` float64."""
    x = np.arange(fine + 1) / fine
    g = darcy_field(n, _rng("darcy-field", split, seed), x)  # the same field for both coefficient maps
    if problem == "darcy":
        return np.where(g >= 0, DARCY_HIGH, DARCY_LOW)
    return np.exp(g / _darcy_field_sd())


def _darcy_fine(problem: str, split: str, n: int, seed: int, fine: int) -> tuple[np.ndarray, np.ndarray]:
    k = darcy_coefficient(problem, split, n, seed, fine)
    u = np.stack([solve_darcy(ki) for ki in k])
    return k[:, :-1, :-1], u[:, :-1, :-1]  # nodes i/fine, i < fine: every coarse grid j/s is a subsample


# -------------------------------------------------------------------------------------- antiderivative and Poisson
def smooth_coefficients(n: int, rng: np.random.Generator, modes: int = SMOOTH_MODES) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha (n, modes + 1), beta (n, modes + 1))`` of ``a(x) = sum_k alpha_k cos(2 pi k x) + beta_k sin(2 pi k x)``."""
    sd = (1.0 + np.arange(modes + 1)) ** -1.5
    z = rng.standard_normal((n, 2, modes + 1)) * sd
    z[:, 1, 0] = 0.0
    return z[:, 0], z[:, 1]


def smooth_eval(alpha: np.ndarray, beta: np.ndarray, x: np.ndarray, which: str) -> np.ndarray:
    """``a``, its antiderivative ``int_0^x a`` or the Poisson solution (``-u'' = a``, ``u(0) = u(1) = 0``) at ``x``.

    ``x`` is ``(N,)`` (shared) or ``(n, N)`` (per function); closed forms, float64.
    """
    x = np.asarray(x, np.float64)
    if x.ndim == 1:
        x = np.broadcast_to(x, (alpha.shape[0], x.shape[0]))
    k = np.arange(1, alpha.shape[1])
    w = 2 * np.pi * k
    th = x[..., None] * w  # (n, N, K)
    a1, b1 = alpha[:, None, 1:], beta[:, None, 1:]
    a0 = alpha[:, :1]
    if which == "a":
        return a0 + (a1 * np.cos(th) + b1 * np.sin(th)).sum(-1)
    if which == "antiderivative":
        return a0 * x + (a1 * np.sin(th) / w + b1 * (1 - np.cos(th)) / w).sum(-1)
    if which == "poisson":
        # u = sum (a_k cos + b_k sin)/w^2 - a0 x^2/2 + c1 x + c0, with u(0) = u(1) = 0
        c0 = -(alpha[:, 1:] / w ** 2).sum(-1, keepdims=True)
        return (a1 * np.cos(th) / w ** 2 + b1 * np.sin(th) / w ** 2).sum(-1) - a0 * x ** 2 / 2 + a0 / 2 * x + c0
    raise ValueError(which)


def _smooth_fine(problem: str, split: str, n: int, seed: int, fine: int) -> tuple[np.ndarray, np.ndarray]:
    alpha, beta = smooth_coefficients(n, _rng("smooth", split, seed))
    x = np.arange(fine) / fine
    return smooth_eval(alpha, beta, x, "a"), smooth_eval(alpha, beta, x, problem)


# ------------------------------------------------------------------------------------------------------- caching
def cache_folder() -> str:
    from zoo.discovery_cache import cache_dir

    return os.path.join(cache_dir(), "operator_learn")


def _cache_key(**kwargs) -> str:
    text = json.dumps({"version": DATA_VERSION, **kwargs}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _cached(name: str, compute, **kwargs) -> dict:
    path = os.path.join(cache_folder(), f"{name}-{_cache_key(name=name, **kwargs)}.npz")
    return cached_arrays(path, compute)


@functools.lru_cache(maxsize=16)
def _fine(problem: str, split: str, n: int, seed: int, fine: int) -> tuple[np.ndarray, np.ndarray]:
    def compute():
        if problem == "burgers":
            a, u = _burgers_fine(split, n, seed, fine)
        elif problem in ("darcy", "darcy_lognormal"):
            a, u = _darcy_fine(problem, split, n, seed, fine)
        else:
            a, u = _smooth_fine(problem, split, n, seed, fine)
        return {"a": a.astype(np.float32), "u": u.astype(np.float32)}

    arrays = _cached("fine", compute, problem=problem, split=split, n=n, seed=seed, fine=fine)
    a, u = arrays["a"], arrays["u"]
    a.setflags(write=False), u.setflags(write=False)
    return a, u


def fine_resolution(problem: str) -> int:
    """The default fine grid of ``problem`` (points per axis); every ``resolution`` must divide it."""
    return _FINE[problem]


def grid_coords(resolution: int, dim: int) -> np.ndarray:
    """``(*grid, dim)`` float32 coordinates ``j/resolution``; ``[..., 0]`` runs along grid axis 0."""
    x = np.arange(resolution) / resolution
    mesh = np.meshgrid(*([x] * dim), indexing="ij")
    return np.stack(mesh, axis=-1).astype(np.float32)


def load(problem: str, *, split: str = "train", n: int, resolution: int, seed: int = 0,
         resolution_fine: int | None = None) -> OperatorData:
    """``n`` functions of ``problem`` at ``resolution`` points per axis (must divide the fine grid).

    ``a`` and ``u`` have one channel. ``resolution_fine`` changes the grid the data is solved on (the same
    random functions, a different discretisation); the default is ``fine_resolution(problem)``.
    """
    _check(problem, split)
    fine = int(resolution_fine or _FINE[problem])
    if resolution <= 0 or fine % resolution:
        raise ValueError(f"resolution {resolution} must divide the fine grid {fine} of {problem!r}")
    a, u = _fine(problem, split, int(n), int(seed), fine)
    stride = fine // resolution
    dim = _DIM[problem]
    sl = (slice(None),) + (slice(None, None, stride),) * dim
    # copies: the cached arrays are shared and read-only, the caller's may be written (torch.from_numpy warns
    # on read-only arrays)
    return OperatorData(problem, split, int(seed), int(resolution), a[sl][:, None].copy(), u[sl][:, None].copy(),
                        grid_coords(resolution, dim))


def to_points(d: OperatorData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values (n, N, C_in), coords (n, N, d), target (n, N, C_out))`` float32: the grid as a point set (C order)."""
    n, c_in = d.a.shape[:2]
    dim = d.coords.shape[-1]
    values = np.moveaxis(d.a, 1, -1).reshape(n, -1, c_in)
    target = np.moveaxis(d.u, 1, -1).reshape(n, -1, d.u.shape[1])
    coords = np.broadcast_to(d.coords.reshape(1, -1, dim), (n, values.shape[1], dim))
    return values, np.ascontiguousarray(coords), target


def irregular(problem: str, *, split: str = "test", n: int, n_points: int, seed: int = 0,
              resolution_fine: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``load`` functions on ``n_points`` random fine-grid nodes per function, off every coarser grid.

    The nodes have an odd index along at least one axis, so they are on no grid that subsamples the fine one
    (``resolution < fine``): a points model is evaluated where it never saw a point. Returns ``(values (n, N, 1),
    coords (n, N, d), target (n, N, 1))`` float32; the same draws as ``load(problem, split=split, seed=seed)``.
    """
    _check(problem, split)
    fine = int(resolution_fine or _FINE[problem])
    dim = _DIM[problem]
    a, u = _fine(problem, split, int(n), int(seed), fine)
    rng = _rng("irregular", problem, split, seed, n_points)
    flat_a, flat_u = a.reshape(n, -1), u.reshape(n, -1)
    grid = np.indices((fine,) * dim).reshape(dim, -1).T  # (fine^d, d) integer node indices
    allowed = np.flatnonzero((grid % 2 == 1).any(axis=1))
    if n_points > allowed.size:
        raise ValueError(f"n_points {n_points} exceeds the {allowed.size} off-grid nodes")
    pick = np.stack([rng.choice(allowed, size=n_points, replace=False) for _ in range(n)])
    values = np.take_along_axis(flat_a, pick, axis=1)[..., None]
    target = np.take_along_axis(flat_u, pick, axis=1)[..., None]
    coords = (grid[pick] / fine).astype(np.float32)
    return values.astype(np.float32), coords, target.astype(np.float32)


# ------------------------------------------------------------------------------------------ functional regression
FUNCTIONAL_KINDS = ("function_on_function", "scalar_on_function")
FOF_MODES = 8  # x(s): trigonometric polynomial, coefficient sd (1 + k)^-1.5 as the 1D operator inputs
FOF_QUERY = 32  # query times per function
FOF_NOISE = 0.05  # sd of the noise on y (training targets); y_clean is the noise-free value
FOF_QUAD = 256  # Gauss-Legendre nodes of int_0^1 beta(s, t) x(s) ds (analytic integrand: round-off)
SOF_COMPONENTS = 20  # x(t) = sum_j xi_j phi_j(t), phi_j = sqrt2 sin(pi j t), Var xi_j = j^-2
SOF_DRIVER = 10  # the low-variance, high-frequency component that drives y
SOF_NOISE = 0.1
DENSE_POINTS = 128  # the dense grid t_j = j / (DENSE_POINTS - 1) on [0, 1]


@dataclasses.dataclass(frozen=True)
class FunctionalData:
    """Functional-regression data: curves observed at irregular times, and their responses.

    Fields (float32 unless said):

    * ``samples`` ``(n, Nmax, 2)``: ``[t, x(t)]`` of each curve at its own ``N_i`` random times (``n_points`` range,
      ``N_i`` uniform in it), sorted by time, zero-padded after ``N_i``; ``mask`` ``(n, Nmax)`` bool, True on real
      samples. ``sampling="uniform"``: times ``U(0, 1)``; ``"skewed"``: ``U^2`` (Beta(1/2, 1), dense near 0, the
      same uniform draws squared, so the two samplings see the same curves).
    * ``t_dense`` ``(T,)`` and ``x_dense`` ``(n, T)``: the same curves on the grid ``j / (T - 1)``, ``T = 128``.
    * function_on_function: ``t_query`` ``(n, M)`` uniform query times (``M = FOF_QUERY``), ``y`` ``(n, M, 1)``
      ``= int_0^1 beta(s, t) x(s) ds + N(0, FOF_NOISE^2)``, ``y_clean`` without the noise (Gauss-Legendre, exact
      to round-off); ``beta`` is :func:`fof_kernel`. x: random trigonometric polynomials.
    * scalar_on_function: ``x(t) = sum_j xi_j sqrt2 sin(pi j t)``, ``Var xi_j = j^-2``, ``j <= 20``; ``y`` ``(n,)``
      ``= z_10 + 0.5 z_1 + N(0, SOF_NOISE^2)`` with ``z_j = xi_j j`` standardised: the response is driven by a
      component with 1% of the first one's variance, so the top few principal components miss it. ``t_query``
      is None.
    """

    kind: str
    split: str
    seed: int
    sampling: str
    samples: np.ndarray
    mask: np.ndarray
    t_dense: np.ndarray
    x_dense: np.ndarray
    y: np.ndarray
    y_clean: np.ndarray
    t_query: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.samples.shape[0])


def fof_kernel(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The function-on-function kernel ``beta(s, t)``: a local smoother (width 0.1, unit mass) plus a global term."""
    s, t = np.asarray(s, np.float64), np.asarray(t, np.float64)
    local = np.exp(-0.5 * ((s - t) / 0.1) ** 2) / (0.1 * np.sqrt(2 * np.pi))
    return local + 2.0 * np.cos(np.pi * s) * t


def fof_response(alpha: np.ndarray, beta: np.ndarray, t: np.ndarray, quad: int = FOF_QUAD) -> np.ndarray:
    """``int_0^1 fof_kernel(s, t) x(s) ds`` for trig curves ``(alpha, beta)`` at times ``t`` ``(n, M)``: ``(n, M)``."""
    nodes, weights = np.polynomial.legendre.leggauss(quad)
    s, w = (nodes + 1) / 2, weights / 2
    xs = smooth_eval(alpha, beta, s, "a")  # (n, Q)
    ker = fof_kernel(s[None, None, :], np.asarray(t, np.float64)[..., None])  # (n, M, Q)
    return np.einsum("nmq,nq,q->nm", ker, xs, w)


def _sof_curves(xi: np.ndarray, t: np.ndarray) -> np.ndarray:
    j = np.arange(1, xi.shape[1] + 1)
    t = np.asarray(t, np.float64)
    if t.ndim == 1:
        t = np.broadcast_to(t, (xi.shape[0], t.shape[0]))
    return np.einsum("nj,nmj->nm", xi, np.sqrt(2) * np.sin(np.pi * t[..., None] * j))


def functional(kind: str, *, split: str = "train", n: int, seed: int = 0, n_points: tuple[int, int] = (20, 100),
               sampling: str = "uniform", dense_points: int = DENSE_POINTS) -> FunctionalData:
    """``n`` curves of ``kind`` (see :class:`FunctionalData` for the fields), deterministic in (kind, split, seed).

    The curves (and responses) depend only on (kind, split, seed): ``n_points``, ``sampling`` and ``dense_points``
    (the size of the dense grid ``t_dense``) change where they are observed, not what they are, so a test at twice
    the points is the same functions at a finer discretisation.
    """
    if kind not in FUNCTIONAL_KINDS:
        raise ValueError(f"unknown functional kind {kind!r}; expected one of {FUNCTIONAL_KINDS}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if sampling not in ("uniform", "skewed"):
        raise ValueError(f"sampling must be 'uniform' or 'skewed', got {sampling!r}")
    lo, hi = int(n_points[0]), int(n_points[1])
    if not 1 <= lo <= hi:
        raise ValueError(f"n_points must be (min, max) with 1 <= min <= max, got {n_points}")
    if int(dense_points) < 2:
        raise ValueError(f"dense_points must be at least 2, got {dense_points}")
    counts = _rng("functional-count", kind, split, seed).integers(lo, hi + 1, size=n)
    u = _rng("functional-times", kind, split, seed).random((n, hi))  # first N_i of a fixed-width row: prefix-stable
    times = u ** 2 if sampling == "skewed" else u
    mask = np.arange(hi)[None, :] < counts[:, None]
    times = np.where(mask, times, np.inf)
    times.sort(axis=1)
    times = np.where(mask, times, 0.0)
    t_dense = np.linspace(0.0, 1.0, int(dense_points))
    noise_rng = _rng("functional-noise", kind, split, seed)
    t_query = None
    if kind == "function_on_function":
        alpha, beta = smooth_coefficients(n, _rng("functional-curves", kind, split, seed), FOF_MODES)
        x_obs = smooth_eval(alpha, beta, times, "a")
        x_dense = smooth_eval(alpha, beta, t_dense, "a")
        t_query = _rng("functional-query", kind, split, seed).random((n, FOF_QUERY))
        y_clean = fof_response(alpha, beta, t_query)[..., None]
        y = y_clean + FOF_NOISE * noise_rng.standard_normal(y_clean.shape)
    else:
        j = np.arange(1, SOF_COMPONENTS + 1)
        z = _rng("functional-curves", kind, split, seed).standard_normal((n, SOF_COMPONENTS))
        xi = z / j
        x_obs = _sof_curves(xi, times)
        x_dense = _sof_curves(xi, t_dense)
        y_clean = z[:, SOF_DRIVER - 1] + 0.5 * z[:, 0]
        y = y_clean + SOF_NOISE * noise_rng.standard_normal(n)
    samples = np.stack([times, np.where(mask, x_obs, 0.0)], axis=-1)
    f32 = np.float32
    return FunctionalData(kind, split, int(seed), sampling, samples.astype(f32), mask, t_dense.astype(f32),
                          x_dense.astype(f32), y.astype(f32), y_clean.astype(f32),
                          None if t_query is None else t_query.astype(f32))
