"""Synthetic non-rigid shapes with a planted correspondence: triangle meshes of four categories.

Every instance of a category is a random member of the category under a random smooth deformation, and all instances
of a category share one connectivity, so vertex ``i`` of one instance corresponds to vertex ``i`` of every other (the
ground truth; the matching pipeline never sees vertex indices, only intrinsic spectral quantities).

- ``ellipsoid``: the icosphere (642 vertices) scaled by the axes (1.35, 1.0, 0.7).
- ``bumpy``: the icosphere with five Gaussian bumps (height 0.15-0.3, width 0.35 rad) at fixed places, axes (1.2, 1.0, 0.85).
- ``superquadric``: ``sign(p) |p|^0.5`` on the icosphere (boxy), axes (1.25, 1.0, 0.8).
- ``torus``: a 30 x 15 periodic grid (450 vertices), radii R = 1.25, r = 0.45, tube height 0.5.

Each instance jitters every parameter of its category by up to 8% (the poses of a family of similar subjects).

The deformation (``deform``) is a bend (rotation about a random axis through the centre by an angle proportional to
the coordinate along a second, orthogonal axis, at most 0.6 rad per unit length) followed by a displacement along
three random low-frequency sinusoids (amplitude 0.03). It is smooth but not isometric: edges stretch or shrink by
about 12% on average (``test_a_deformation_is_smooth_and_not_isometric``), so commutativity with the Laplacian holds
only approximately, as between different subjects of one class. Every instance is centred and scaled to
unit total area, so eigenvalues are comparable across instances.

>>> v, f = icosphere(3)
>>> v.shape, f.shape
((642, 3), (1280, 3))
"""
from __future__ import annotations

import numpy as np

CATEGORIES = ("ellipsoid", "bumpy", "superquadric", "torus")
TORUS_GRID = (30, 15)
BEND = 0.6  # max bend, radians per unit length along the bend direction
WIGGLE = 0.03  # amplitude of the smooth displacement field


def icosphere(level: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Unit icosphere: the icosahedron subdivided ``level`` times (10 * 4^level + 2 vertices), faces outward."""
    t = (1 + 5 ** 0.5) / 2
    verts = [np.array(p, float) / np.linalg.norm(p) for p in
             [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
              (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
             (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
             (8, 6, 7), (9, 8, 1)]
    for _ in range(level):
        mids: dict[tuple[int, int], int] = {}

        def mid(a: int, b: int, mids: dict[tuple[int, int], int] = mids) -> int:
            key = (min(a, b), max(a, b))
            if key not in mids:
                p = verts[a] + verts[b]
                verts.append(p / np.linalg.norm(p))
                mids[key] = len(verts) - 1
            return mids[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return np.array(verts), np.array(faces, dtype=np.int64)


def torus_faces(nu: int = TORUS_GRID[0], nv: int = TORUS_GRID[1]) -> np.ndarray:
    """Faces of the periodic ``nu x nv`` grid; vertex ``(i, j)`` is ``i * nv + j``."""
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    a, b = i * nv + j, ((i + 1) % nu) * nv + j
    c, d = ((i + 1) % nu) * nv + (j + 1) % nv, i * nv + (j + 1) % nv
    return np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])


def template(category: str) -> tuple[np.ndarray, np.ndarray]:
    """The category's reference vertices (unit sphere, or the canonical torus R=1.25, r=0.45) and faces."""
    if category == "torus":
        nu, nv = TORUS_GRID
        u, v = np.meshgrid(2 * np.pi * np.arange(nu) / nu, 2 * np.pi * np.arange(nv) / nv, indexing="ij")
        verts = np.stack([(1.25 + 0.45 * np.cos(v)) * np.cos(u), (1.25 + 0.45 * np.cos(v)) * np.sin(u), 0.45 * np.sin(v)], -1)
        return verts.reshape(-1, 3), torus_faces(nu, nv)
    if category not in CATEGORIES:
        raise ValueError(f"shape_match: category {category!r}; choose from {CATEGORIES}")
    return icosphere(3)


# each category's canonical member; an instance jitters every parameter by up to JITTER (relative), so instances of a
# category are near-isometric before the deformation, as the poses of one subject are
ELLIPSOID_AXES = (1.35, 1.0, 0.7)
BUMPS = ((0.0, 0.0, 1.0, 0.3), (0.8, 0.6, 0.0, 0.25), (-0.6, 0.7, -0.4, 0.2), (0.2, -0.9, -0.4, 0.3), (-0.9, -0.3, 0.3, 0.15))
BUMPY_AXES = (1.2, 1.0, 0.85)
SUPERQUADRIC = {"exponent": 0.5, "axes": (1.25, 1.0, 0.8)}
TORUS = {"R": 1.25, "r": 0.45, "height": 0.5}
JITTER = 0.08


def base_shape(category: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random member of ``category`` (before deformation): vertices and the category's faces."""
    def jitter(*values: float) -> np.ndarray:
        return np.array(values) * rng.uniform(1 - JITTER, 1 + JITTER, len(values))

    if category == "torus":
        nu, nv = TORUS_GRID
        big, small, height = jitter(TORUS["R"], TORUS["r"], TORUS["height"])
        u, v = np.meshgrid(2 * np.pi * np.arange(nu) / nu, 2 * np.pi * np.arange(nv) / nv, indexing="ij")
        verts = np.stack([(big + small * np.cos(v)) * np.cos(u), (big + small * np.cos(v)) * np.sin(u), height * np.sin(v)], -1)
        return verts.reshape(-1, 3), torus_faces(nu, nv)
    p, faces = template(category)
    if category == "ellipsoid":
        return p * jitter(*ELLIPSOID_AXES), faces
    if category == "bumpy":
        bumps = np.array(BUMPS)
        centres = bumps[:, :3] / np.linalg.norm(bumps[:, :3], axis=1, keepdims=True)
        angle = np.arccos(np.clip(p @ centres.T, -1, 1))
        radius = 1 + (jitter(*bumps[:, 3]) * np.exp(-0.5 * (angle / 0.35) ** 2)).sum(1)
        return p * radius[:, None] * jitter(*BUMPY_AXES), faces
    e = jitter(SUPERQUADRIC["exponent"])[0]
    return np.sign(p) * np.abs(p) ** e * jitter(*SUPERQUADRIC["axes"]), faces


def _rotate(x: np.ndarray, axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues' rotation of each row of ``x`` about unit ``axis`` by its own ``angle``."""
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    return x * c + np.cross(axis, x) * s + axis * (x @ axis)[:, None] * (1 - c)


def deform(verts: np.ndarray, rng: np.random.Generator, bend: float = BEND, wiggle: float = WIGGLE) -> np.ndarray:
    """A random smooth non-rigid deformation: a bend, then a low-frequency displacement field (module docstring)."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    along = np.cross(axis, rng.normal(size=3))
    along /= np.linalg.norm(along)
    x = _rotate(verts, axis, rng.uniform(-bend, bend) * (verts @ along))
    for _ in range(3):
        freq = rng.normal(size=3)
        freq *= rng.uniform(1.0, 2.5) / np.linalg.norm(freq)
        direction = rng.normal(size=3)
        x = x + wiggle * np.sin(x @ freq + rng.uniform(0, 2 * np.pi))[:, None] * direction / np.linalg.norm(direction)
    return x


def face_areas(verts: np.ndarray, faces: np.ndarray) -> np.ndarray:
    e1, e2 = verts[faces[:, 1]] - verts[faces[:, 0]], verts[faces[:, 2]] - verts[faces[:, 0]]
    return 0.5 * np.linalg.norm(np.cross(e1, e2), axis=1)


def instance(category: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A deformed random member of ``category``, centred, with unit total area."""
    verts, faces = base_shape(category, rng)
    verts = deform(verts, rng)
    verts = verts - verts.mean(0)
    return verts / np.sqrt(face_areas(verts, faces).sum()), faces
