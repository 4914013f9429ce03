"""The three model contracts of vsa_bench, as base classes whose ``forward`` runs the contract on a batch dict.

A model says which contract it follows with the class attribute ``vsa_kind``:

- ``"factorize"`` (:class:`Factorizer`): ``factorize(s (B, D), codebooks: list of F (M, D) tensors, iters: int)
  -> (indices (B, F) long, iterations (B,) long)``. ``iterations[b]`` is the number of full update sweeps the model
  ran on problem ``b``: the sweep that found its state unchanged (its fixed point) included, ``iters`` when it
  never converged. The task's accuracy counts a problem solved when every factor is right.
- ``"memory"`` (:class:`SetMemory`): a VSA that stores sets of symbols of ``range(alphabet)``:
  ``atoms(alphabet, dim, seed) -> atoms`` (its seeded random codebook, any object), ``bundle(atoms, sets (B, k)
  long) -> memory (B, ...)``, ``contains(atoms, memory, items (B, Q) long) -> (B, Q) bool`` (the model's own
  decision rule and threshold) and ``intersection(atoms, memory_a, memory_b) -> (B,) float`` (an estimate of
  |A & B|).
- ``"encode"`` (:class:`FunctionEncoder`): ``encode(x (B, N, d_in), y (B, N, d_out), mask (B, N) bool) -> (B, D)
  complex`` (padded samples, ``mask`` False, must not change the code); optional ``decode(z (B, D), xq (B, M, d_in))
  -> (B, M, d_out)``.

``forward(batch)`` takes the dict :func:`zoo_task_vsa_bench.task.example_input` builds and runs the kind's
contract on it, so the conformance kit checks each kind the same way.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

KINDS = ("factorize", "memory", "encode")


class Factorizer(nn.Module):
    """Base class of ``vsa_kind = "factorize"`` models: subclasses implement :meth:`factorize`."""

    vsa_kind = "factorize"

    def factorize(self, s: torch.Tensor, codebooks: list[torch.Tensor], iters: int) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def forward(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        return self.factorize(batch["s"], list(batch["codebooks"]), int(batch["iters"]))


class SetMemory(nn.Module):
    """Base class of ``vsa_kind = "memory"`` models: subclasses implement atoms / bundle / contains / intersection."""

    vsa_kind = "memory"

    def atoms(self, alphabet: int, dim: int, seed: int) -> Any:
        raise NotImplementedError

    def bundle(self, atoms: Any, sets: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def contains(self, atoms: Any, memory: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def intersection(self, atoms: Any, memory_a: torch.Tensor, memory_b: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        atoms = self.atoms(int(batch["alphabet"]), int(batch["dim"]), int(batch["seed"]))
        mem_a, mem_b = self.bundle(atoms, batch["sets"]), self.bundle(atoms, batch["sets_b"])
        return self.contains(atoms, mem_a, batch["items"]), self.intersection(atoms, mem_a, mem_b)


class FunctionEncoder(nn.Module):
    """Base class of ``vsa_kind = "encode"`` models: subclasses implement :meth:`encode` (and may add ``decode``)."""

    vsa_kind = "encode"

    def encode(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, batch: dict[str, Any]) -> torch.Tensor:
        return self.encode(batch["x"], batch["y"], batch["mask"])


def kind_of(model: nn.Module) -> str:
    """The model's ``vsa_kind``; a model without one gets an error naming the three base classes."""
    kind = getattr(model, "vsa_kind", None)
    if kind not in KINDS:
        raise TypeError(f"vsa_bench: {type(model).__name__} has vsa_kind={kind!r}; set the class attribute to one of "
                        f"{KINDS} (subclass zoo_task_vsa_bench.contract.Factorizer / SetMemory / FunctionEncoder)")
    return kind
