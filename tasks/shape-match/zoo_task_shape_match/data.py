"""Seeded shape collections of ``shape_match``, with their spectra, descriptors and geodesics, cached on disk.

A collection is ``n`` instances of one category (``shapes.instance``) drawn from
``numpy.random.default_rng([seed, split, category])``, so the splits are disjoint draws and every seed gives new
shapes. Each instance carries its first ``k`` Laplacian eigenpairs, its lumped mass, its descriptors (``DESCRIPTORS``:
wave kernel signature plus heat kernels from the category's landmarks, which correspond across instances like every
vertex) and, for the splits that are scored, its all-pairs graph geodesics divided by the shape's diameter.

Caching: ``.npz`` files (read with ``allow_pickle=False``) under ``<zoo cache>/shape_match``, keyed by a hash of every
argument and ``DATA_VERSION``, written atomically through ``zoo.fileio.atomic_path``; a process also keeps the last few
in memory.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass

import numpy as np

from zoo.fileio import cached_arrays

from . import shapes, spectral

DATA_VERSION = 4
K = 30
DESCRIPTORS = {"wks_energies": 32, "landmarks": 5, "heat_times": 4}
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class ShapeSet:
    """``n`` instances of one category on one connectivity (vertex ``i`` corresponds across instances)."""

    category: str
    verts: np.ndarray  # (N, n, 3)
    faces: np.ndarray  # (F, 3)
    evals: np.ndarray  # (N, k)
    evecs: np.ndarray  # (N, n, k), orthonormal under the mass
    mass: np.ndarray  # (N, n)
    desc: np.ndarray  # (N, n, d)
    geodesic: np.ndarray | None = None  # (N, n, n) float16, divided by each shape's diameter

    def __len__(self) -> int:
        return len(self.verts)


def cache_folder() -> str:
    from zoo.discovery_cache import cache_dir

    return os.path.join(cache_dir(), "shape_match")


def _cached(compute, **key) -> dict[str, np.ndarray]:
    text = json.dumps({"version": DATA_VERSION, **key}, sort_keys=True)
    path = os.path.join(cache_folder(), f"shapes-{hashlib.sha256(text.encode()).hexdigest()[:24]}.npz")
    return cached_arrays(path, compute)


@functools.lru_cache(maxsize=16)
def shape_set(category: str, split: str, n: int, seed: int, k: int = K, geodesic: bool = False) -> ShapeSet:
    """``n`` seeded instances of ``category`` for ``split`` with their spectral data (module docstring)."""
    if split not in SPLITS:
        raise ValueError(f"shape_match: split {split!r}; choose from {SPLITS}")
    if category not in shapes.CATEGORIES:
        raise ValueError(f"shape_match: category {category!r}; choose from {shapes.CATEGORIES}")

    def compute() -> dict[str, np.ndarray]:
        rng = np.random.default_rng([seed, SPLITS.index(split), shapes.CATEGORIES.index(category)])
        landmarks = spectral.farthest_points(shapes.template(category)[0], DESCRIPTORS["landmarks"])
        out: dict[str, list[np.ndarray]] = {name: [] for name in ("verts", "evals", "evecs", "mass", "desc", "geodesic")}
        for _ in range(n):
            verts, faces = shapes.instance(category, rng)
            evals, evecs, mass = spectral.eigenpairs(verts, faces, k)
            out["verts"].append(verts)
            out["evals"].append(evals)
            out["evecs"].append(evecs)
            out["mass"].append(mass)
            out["desc"].append(spectral.descriptors(evals, evecs, mass, landmarks, DESCRIPTORS["wks_energies"],
                                                    DESCRIPTORS["heat_times"]))
            if geodesic:
                g = spectral.geodesics(verts, faces)
                out["geodesic"].append((g / g.max()).astype(np.float16))
        arrays = {name: np.stack(v).astype(np.float16 if name == "geodesic" else np.float32) for name, v in out.items() if v}
        arrays["faces"] = faces
        return arrays

    a = _cached(compute, category=category, split=split, n=n, seed=seed, k=k, geodesic=geodesic,
                descriptors=DESCRIPTORS, bend=shapes.BEND, wiggle=shapes.WIGGLE, jitter=shapes.JITTER)
    return ShapeSet(category, a["verts"], a["faces"], a["evals"], a["evecs"], a["mass"], a["desc"], a.get("geodesic"))


def pairs(n: int, n_pairs: int | None, seed: int) -> np.ndarray:
    """``(P, 2)`` ordered (source, target) index pairs of ``n`` shapes: all ``n (n - 1)`` when ``n_pairs`` is None,
    else ``n_pairs`` distinct ones drawn with ``seed``."""
    every = np.array([(i, j) for i in range(n) for j in range(n) if i != j])
    if n_pairs is None or n_pairs >= len(every):
        return every
    return every[np.sort(np.random.default_rng(seed).choice(len(every), n_pairs, replace=False))]
