"""Task Vector Bases (Zeng, He, Liu, You, Hao, Tsai, Yamada and Zhao 2025, "Task Vector Bases: A Unified and Scalable
Framework for Compressed Task Arithmetic", arXiv:2502.01015, first titled "Efficient Model Editing with Task Vector
Bases"; code https://github.com/uiuctml/TaskVectorBasis): T task vectors compressed into M < T basis atoms.

Task vectors ``tau_1..tau_T`` (fine-tuned minus pretrained weights, Ilharco et al. 2023) are the columns of
``V`` (P x T). The basis is built by a linear autoencoder on their Gram matrix ``G = V^T V`` (T x T): an encoder
``B = softmax(A / tau)`` (T x M, softmax over the tasks, so each atom ``s_m = sum_j B[j, m] tau_j`` is a convex
combination of task vectors) and a linear decoder ``W`` (M x T) rebuild the collection as ``V_hat = S W = V B W``;
they minimise the reconstruction error measured through the Gram matrix,

    L(A, W) = ||V (B W - I)||_F^2 / T^2 = tr(E^T G E) / T^2,   E = B W - I,

with Adam (lr 1e-2, weight decay 1e-6; ``A`` drawn from N(0, 1), ``W`` zero) -- never touching a P-sized tensor
while training. Only the M atoms and the M x T coefficients are stored. Operations (Sections 3-4):

- ``reconstruct(t) = sum_m W[m, t] s_m``, the task vector served from the basis;
- ``add()``: the merged task vector of the whole collection, the sum of the atoms (as the authors' addition
  evaluation does), ``add(ts)``: the sum of the reconstructions of the tasks ``ts``;
- ``negate(t) = -reconstruct(t)``, unlearning task ``t`` with its reconstruction.

Heuristic bases for comparison (``method=``): ``pca`` (truncated SVD of ``V``: the top-M left singular vectors scaled by
their singular values, coefficients the right singular vectors -- the least-squares best M atoms, with no convexity)
and ``random_sample`` (M of the T task vectors kept at random, every task least-squares projected onto them).

Paper defaults (``PAPER``): the authors' released recipe (20,000 Adam steps, lr 1e-2, softmax temperature 5,
weight decay 1e-6), M = T / 4. CPU defaults (``CPU``): 3,000 steps, and ``solve_w=True``: after training, ``W`` is
replaced by its exact minimiser for the learned ``B`` (a T x T least-squares solve, ``(B^T G B)^+ B^T G``), which
can only lower ``L`` and makes M = T reconstruct the collection exactly.

Deviations: the Gram matrix is divided by its mean diagonal before training (Adam is nearly scale-free; this keeps
the loss O(1) whatever the task vectors' size); ``solve_w`` (CPU default, see above); the merge coefficient of the
atom sum is chosen on validation from the task's task-arithmetic grid scaled by T / M (the atoms carry M units of
task weight where the collection's sum carries T), with the same number of candidates; the ``pca`` heuristic is
uncentred (the authors' is centred and stores the mean too, but the mean of the task vectors alone is the task-
arithmetic merge, which would make its addition the full collection's at M + 1 stored vectors), and its addition is
the sum of its reconstructions, where the authors' sums its signed atoms.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

__all__ = ["CPU", "METHODS", "PAPER", "BasisMerger", "TaskVectorBasis", "task_vector_bases"]

State = dict[str, torch.Tensor]
METHODS = ("autoencoder", "pca", "random_sample")
PAPER: dict[str, Any] = {"M": 2, "method": "autoencoder", "steps": 20_000, "lr": 1e-2, "tau": 5.0,
                         "weight_decay": 1e-6, "solve_w": False}
CPU: dict[str, Any] = {**PAPER, "steps": 3_000, "solve_w": True}
PRESETS = {"cpu": CPU, "paper": PAPER}


def _flatten(vectors: Sequence[State], keys: Sequence[str]) -> torch.Tensor:
    """(P, T): each task vector's tensors (in ``keys`` order) flattened into one column."""
    return torch.stack([torch.cat([v[k].detach().reshape(-1).double() for k in keys]) for v in vectors], dim=1)


class TaskVectorBasis:
    """M basis atoms for T task vectors (see the module docstring); ``fit`` builds it.

    Args:
        M: number of atoms (1 <= M <= T).
        method: ``"autoencoder"`` (the paper's), ``"pca"`` or ``"random_sample"`` (heuristic bases).
        steps, lr, tau, weight_decay: the autoencoder's Adam training and softmax temperature.
        solve_w: replace the trained decoder ``W`` by its exact least-squares minimiser for the learned encoder.
        seed: the encoder's initialisation (autoencoder) or the kept tasks (random_sample).

    >>> tvs = [{"w": torch.randn(4, 3), "b": torch.randn(3)} for _ in range(4)]
    >>> basis = TaskVectorBasis(M=4, steps=200).fit(tvs)
    >>> torch.allclose(basis.reconstruct(2)["w"], tvs[2]["w"], atol=1e-4), basis.stored_floats()  # M = T: exact
    (True, 76)
    """

    def __init__(self, M: int = CPU["M"], method: str = CPU["method"], *, steps: int = CPU["steps"],
                 lr: float = CPU["lr"], tau: float = CPU["tau"], weight_decay: float = CPU["weight_decay"],
                 solve_w: bool = CPU["solve_w"], seed: int = 0) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown basis method {method!r}; choose from {list(METHODS)}")
        if int(M) < 1:
            raise ValueError(f"M (the number of basis atoms) must be >= 1, got {M}")
        if int(steps) < 0 or float(lr) <= 0 or float(tau) <= 0:
            raise ValueError(f"need steps >= 0, lr > 0 and tau > 0; got steps={steps}, lr={lr}, tau={tau}")
        self.M, self.method, self.steps, self.lr, self.tau = int(M), method, int(steps), float(lr), float(tau)
        self.weight_decay, self.solve_w, self.seed = float(weight_decay), bool(solve_w), int(seed)
        self.atoms: list[State] = []
        self.coef: torch.Tensor | None = None  # (M, T)
        self.encoder: torch.Tensor | None = None  # (T, M) autoencoder's B, random_sample's selection
        self.loss: float = float("nan")  # the Gram reconstruction loss of the fitted basis (relative to ||V||^2)

    # --- building ---------------------------------------------------------------------------------------------
    def fit(self, task_vectors: Sequence[State], M: int | None = None) -> TaskVectorBasis:
        """Build the basis of ``task_vectors`` (dicts name -> tensor with the same names and shapes); ``M`` overrides
        the constructor's. Returns ``self``."""
        if M is not None:
            self.M = int(M)
        T = len(task_vectors)
        if T < 1:
            raise ValueError("fit needs at least one task vector")
        if not 1 <= self.M <= T:
            raise ValueError(f"M must be in [1, T={T}], got M={self.M}")
        keys = list(task_vectors[0])
        for i, v in enumerate(task_vectors):
            if list(v) != keys or any(v[k].shape != task_vectors[0][k].shape for k in keys):
                raise ValueError(f"task vector {i} does not have task vector 0's names and shapes")
        self._keys, self._shapes = keys, {k: task_vectors[0][k].shape for k in keys}
        self._dtype = task_vectors[0][keys[0]].dtype
        V = _flatten(task_vectors, keys)  # (P, T), float64
        G = V.T @ V
        if self.method == "autoencoder":
            S, W, Bm = self._fit_autoencoder(G, V)
        elif self.method == "pca":
            S, W, Bm = self._fit_pca(V)
        else:
            S, W, Bm = self._fit_random_sample(V, G)
        self.coef, self.encoder = W.float(), None if Bm is None else Bm.float()
        self.atoms = [self._unflatten(S[:, m]) for m in range(S.shape[1])]
        rec = S @ W
        self.loss = float((rec - V).pow(2).sum() / V.pow(2).sum().clamp_min(1e-30))
        return self

    def _fit_autoencoder(self, G: torch.Tensor, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        T, M = G.shape[0], self.M
        Gn = (G / G.diagonal().mean().clamp_min(1e-30)).float()
        eye = torch.eye(T)
        gen = torch.Generator().manual_seed(self.seed)
        A = torch.randn(T, M, generator=gen).requires_grad_(True)
        W = torch.zeros(M, T, requires_grad=True)
        opt = torch.optim.Adam([A, W], lr=self.lr, weight_decay=self.weight_decay)
        for _ in range(self.steps):
            E = torch.softmax(A / self.tau, dim=0) @ W - eye
            loss = (E * (Gn @ E)).sum() / (T * T)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        Bm = torch.softmax(A.detach() / self.tau, dim=0).double()  # (T, M)
        Wd = W.detach().double()
        if self.solve_w:  # argmin_W ||V (B W - I)||^2 = (B^T G B)^+ B^T G
            Wd = torch.linalg.pinv(Bm.T @ G @ Bm) @ (Bm.T @ G)
        return V @ Bm, Wd, Bm

    def _fit_pca(self, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        U, s, Vh = torch.linalg.svd(V, full_matrices=False)
        M = self.M
        return U[:, :M] * s[:M], Vh[:M], None

    def _fit_random_sample(self, V: torch.Tensor, G: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        T = V.shape[1]
        keep = torch.randperm(T, generator=torch.Generator().manual_seed(self.seed))[: self.M].sort().values
        Bm = torch.zeros(T, self.M, dtype=torch.float64)
        Bm[keep, torch.arange(self.M)] = 1.0
        W = torch.linalg.pinv(Bm.T @ G @ Bm) @ (Bm.T @ G)  # least-squares coefficients on the kept vectors
        return V @ Bm, W, Bm

    def _unflatten(self, flat: torch.Tensor) -> State:
        out, start = {}, 0
        for k in self._keys:
            n = int(torch.Size(self._shapes[k]).numel())
            out[k] = flat[start:start + n].reshape(self._shapes[k]).to(self._dtype)
            start += n
        return out

    # --- operations -------------------------------------------------------------------------------------------
    def _check(self) -> torch.Tensor:
        if self.coef is None:
            raise RuntimeError("the basis is not fitted: call fit(task_vectors) first")
        return self.coef

    def _index(self, t: int) -> int:
        T = self._check().shape[1]
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < T:
            raise ValueError(f"task index must be an int in [0, {T}), got {t!r}")
        return t

    def _combine(self, weights: torch.Tensor) -> State:
        return {k: sum(float(w) * a[k] for w, a in zip(weights, self.atoms, strict=True)) for k in self._keys}

    def reconstruct(self, t: int) -> State:
        """Task ``t``'s vector served from the basis: ``sum_m W[m, t] s_m``."""
        return self._combine(self._check()[:, self._index(t)])

    def add(self, ts: Sequence[int] | None = None) -> State:
        """The merged task vector: with ``ts=None`` the sum of the atoms (the paper's addition; for ``pca``, whose
        atoms are signed directions, the sum of all reconstructions), else the sum of the reconstructions of
        ``ts``."""
        W = self._check()
        if ts is None and self.method != "pca":
            return self._combine(torch.ones(W.shape[0]))
        idx = list(range(W.shape[1])) if ts is None else [self._index(t) for t in ts]
        if not idx:
            raise ValueError("add needs at least one task")
        return self._combine(W[:, idx].sum(1))

    def negate(self, t: int) -> State:
        """``-reconstruct(t)``: the vector that unlearns task ``t``."""
        return {k: -v for k, v in self.reconstruct(t).items()}

    def addition_mass(self) -> float:
        """Units of task weight in ``add()`` (T for a plain sum; M for the autoencoder's convex atoms)."""
        W = self._check()
        if self.method == "pca":
            return float(W.shape[1])
        return float(self.encoder.sum()) if self.encoder is not None else float(W.shape[0])

    def stored_floats(self) -> int:
        """Floats kept to serve every task: M atoms of P floats and the M x T coefficients."""
        W = self._check()
        P = sum(int(torch.Size(s).numel()) for s in self._shapes.values())
        return len(self.atoms) * P + W.numel()


class BasisMerger(nn.Module):
    """``task_merge`` model: merges (and negates) through a task vector basis fitted to the suite's task vectors.

    ``merge(suite)``: ``theta_0 + lam * basis.add()``, ``lam`` chosen on the validation split (the task's
    ``select_lambda``) from the task-arithmetic grid scaled by T / ``addition_mass``; ``negate(suite, target)``:
    ``theta_0 - lam * basis.reconstruct(target)`` with the task's negation protocol (``select_negation``);
    ``stored_floats(suite)``: the basis's storage. No parameters: everything is built from the suite.
    """

    def __init__(self, M: int = CPU["M"], method: str = CPU["method"], steps: int = CPU["steps"],
                 lr: float = CPU["lr"], tau: float = CPU["tau"], weight_decay: float = CPU["weight_decay"],
                 solve_w: bool = CPU["solve_w"], seed: int = 0) -> None:
        super().__init__()
        self.options = {"M": int(M), "method": method, "steps": int(steps), "lr": float(lr), "tau": float(tau),
                        "weight_decay": float(weight_decay), "solve_w": bool(solve_w), "seed": int(seed)}
        TaskVectorBasis(**self.options)  # validate the arguments now
        self._fitted: dict[int, TaskVectorBasis] = {}
        self.chosen: dict[str, Any] = {}

    def basis(self, suite: Any) -> TaskVectorBasis:
        """The basis of ``suite.task_vectors`` (fitted once per suite object)."""
        key = id(suite)
        if key not in self._fitted:
            self._fitted = {key: TaskVectorBasis(**self.options).fit(suite.task_vectors)}
        return self._fitted[key]

    def merge(self, suite: Any, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        from zoo_task_task_merge import baselines as TB

        basis = self.basis(suite)
        ts = None if tasks is None or list(tasks) == list(suite.tasks) else [suite.tasks.index(t) for t in tasks]
        vec = basis.add(ts)
        scale = (len(suite.tasks) if ts is None else len(ts)) / (basis.addition_mass() if ts is None else len(ts))
        grid = [g * scale for g in TB.LAMBDA_GRID]
        lam, state = TB.select_lambda(suite, lambda lam: {k: v + lam * vec[k] for k, v in suite.base_state.items()},
                                      grid, tasks)
        self.chosen = {"lambda": lam, "recon_loss": basis.loss}
        return state

    def negate(self, suite: Any, target: str | int, *, control: str = "control") -> State:
        from zoo_task_task_merge import baselines as TB

        basis = self.basis(suite)
        i = suite.tasks.index(suite._name(target))
        lam, state = TB.select_negation(suite, target, vector=basis.reconstruct(i), control=control)
        self.chosen = {"neg_lambda": lam}
        return state

    def stored_floats(self, suite: Any) -> int:
        return self.basis(suite).stored_floats()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise TypeError("task_vector_bases is a merging method: call .merge(suite), then load the state into "
                        "suite.architecture()")

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items())


def task_vector_bases(preset: str = "cpu", M: int | None = None, method: str | None = None, steps: int | None = None,
                      lr: float | None = None, tau: float | None = None, weight_decay: float | None = None,
                      solve_w: bool | None = None, seed: int = 0) -> BasisMerger:
    """The basis merger; ``preset="paper"`` (the authors' 20,000-step recipe) or ``"cpu"``; the other arguments,
    when given, override the preset (see ``TaskVectorBasis``)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {list(PRESETS)}")
    given = {"M": M, "method": method, "steps": steps, "lr": lr, "tau": tau, "weight_decay": weight_decay,
             "solve_w": solve_w}
    return BasisMerger(**{**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}}, seed=seed)
