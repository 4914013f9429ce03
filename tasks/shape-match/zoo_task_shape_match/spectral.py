"""Spectral geometry of a triangle mesh: the cotangent Laplacian with a lumped mass matrix, its first ``k``
eigenpairs, intrinsic descriptors (the wave kernel signature and landmark heat kernels) and graph geodesics.

The eigenproblem is ``W phi = lambda M phi`` (``W`` the cotangent stiffness matrix, positive semi-definite; ``M`` the
diagonal of one third of the adjacent triangle areas), solved with ``scipy.sparse.linalg.eigsh`` in shift-invert mode
with a fixed start vector (deterministic signs), so the basis is orthonormal under the mass: ``Phi^T M Phi = I``.

>>> from zoo_task_shape_match.shapes import icosphere
>>> v, f = icosphere(2)
>>> evals, evecs, mass = eigenpairs(v, f, k=4)
>>> bool(abs(evals[0]) < 1e-6 and abs(evals[1] - 2 / 1.0) < 0.1)  # the unit sphere's lambda_1 = l(l+1) = 2
True
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra
from scipy.sparse.linalg import eigsh

from .shapes import face_areas


def cotan_laplacian(verts: np.ndarray, faces: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """``(W, mass)``: the cotangent stiffness matrix (``W_ij = -(cot a + cot b) / 2`` for an edge, rows sum to 0) and
    the lumped vertex areas."""
    n = len(verts)
    rows, cols, vals = [], [], []
    for c in range(3):  # the corner c is opposite the edge (i, j)
        i, j, o = faces[:, (c + 1) % 3], faces[:, (c + 2) % 3], faces[:, c]
        u, w = verts[i] - verts[o], verts[j] - verts[o]
        cot = (u * w).sum(1) / np.maximum(np.linalg.norm(np.cross(u, w), axis=1), 1e-12)
        rows += [i, j, i, j]
        cols += [j, i, i, j]
        vals += [-0.5 * cot, -0.5 * cot, 0.5 * cot, 0.5 * cot]
    W = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)).tocsr()
    mass = np.zeros(n)
    np.add.at(mass, faces.ravel(), np.repeat(face_areas(verts, faces) / 3, 3))
    return W, mass


def eigenpairs(verts: np.ndarray, faces: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(evals (k,), evecs (n, k), mass (n,))``, ascending, ``evecs^T diag(mass) evecs = I``."""
    W, mass = cotan_laplacian(verts, faces)
    evals, evecs = eigsh(W, k=k, M=sp.diags(mass), sigma=-1e-3, which="LM", v0=np.ones(len(verts)))
    order = np.argsort(evals)
    return np.maximum(evals[order], 0.0), evecs[:, order], mass


WKS_WIDTH = 2.0  # Aubry et al. use 7 with ~100 eigenpairs; with 30 that blurs every energy into one


def wks(evals: np.ndarray, evecs: np.ndarray, n_energies: int) -> np.ndarray:
    """Wave kernel signature (Aubry, Schlickewei & Cremers 2011) at ``n_energies`` log-energies, (n, n_energies):
    ``sum_i phi_i(x)^2 exp(-(e - log lambda_i)^2 / 2 s^2) / sum_i exp(...)``, the zero eigenvalue left out."""
    log_l = np.log(evals[1:])
    s = WKS_WIDTH * (log_l[-1] - log_l[0]) / n_energies
    energies = np.linspace(log_l[0] + 2 * s, log_l[-1] - 2 * s, n_energies)
    weights = np.exp(-(energies[:, None] - log_l[None, :]) ** 2 / (2 * s ** 2))  # (E, k-1)
    return (evecs[:, 1:] ** 2) @ weights.T / weights.sum(1)


def landmark_heat(evals: np.ndarray, evecs: np.ndarray, landmarks: np.ndarray, n_times: int) -> np.ndarray:
    """Heat kernels ``h_t(l, x) = sum_i exp(-t lambda_i) phi_i(l) phi_i(x)`` from each landmark at ``n_times`` times,
    (n, len(landmarks) * n_times). The times run from ``ln 2 / lambda_max`` to ``ln 100 / lambda_max`` (the last
    eigenfunction's weight from 1/2 to 1/100): local kernels, since with only k eigenpairs the usual range
    ``[4 ln 10 / lambda_max, 4 ln 10 / lambda_1]`` leaves the first few eigenfunctions alone."""
    times = np.geomspace(np.log(2), np.log(100), n_times) / evals[-1]
    decay = np.exp(-times[:, None] * evals[None, :])  # (T, k)
    out = np.einsum("tk,lk,nk->nlt", decay, evecs[landmarks], evecs)
    return out.reshape(len(evecs), -1)


def descriptors(evals: np.ndarray, evecs: np.ndarray, mass: np.ndarray, landmarks: np.ndarray, n_energies: int,
                n_times: int) -> np.ndarray:
    """WKS and landmark heat kernels side by side, each column centred (its mean over the surface is the same on
    every shape and would drown the rest) and scaled to unit norm under the mass, (n, d)."""
    d = np.concatenate([wks(evals, evecs, n_energies), landmark_heat(evals, evecs, landmarks, n_times)], 1)
    d = d - (mass[:, None] * d).sum(0, keepdims=True) / mass.sum()
    return d / np.sqrt((mass[:, None] * d ** 2).sum(0, keepdims=True))


def farthest_points(verts: np.ndarray, n: int) -> np.ndarray:
    """``n`` vertex indices by farthest-point sampling from vertex 0 (Euclidean): the category's landmarks."""
    chosen = [0]
    dist = np.linalg.norm(verts - verts[0], axis=1)
    for _ in range(n - 1):
        chosen.append(int(dist.argmax()))
        dist = np.minimum(dist, np.linalg.norm(verts - verts[chosen[-1]], axis=1))
    return np.array(chosen)


def geodesics(verts: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """All-pairs shortest paths along mesh edges (Dijkstra, Euclidean edge lengths), (n, n) float32: a graph
    approximation of the geodesic distance (it overestimates by a few percent on these meshes)."""
    edges = np.unique(np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1), axis=0)
    length = np.linalg.norm(verts[edges[:, 0]] - verts[edges[:, 1]], axis=1)
    graph = sp.coo_matrix((length, (edges[:, 0], edges[:, 1])), shape=(len(verts),) * 2).tocsr()
    return dijkstra(graph, directed=False).astype(np.float32)
