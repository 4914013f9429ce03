"""``zoo reproduce looped-transformer-computer``: every SUBLEQ program of ``algorithmic_seq`` through the constructed
looped transformer, against the reference interpreter, with two controls that must break it.

Every row is ``algorithmic_seq.evaluate(model, mode="subleq", seed=seed)``: 20 seeded inputs for each of the six
programs of ``data.PROGRAMS``; ``exact`` is the fraction of runs whose whole final memory equals the interpreter's.
Nothing is trained, so the seeds draw the programs' inputs (several input seeds instead of training seeds). Rows:

* ``looped_tf``: the CPU preset (8-bit numbers, softmax temperature 16);
* ``looped_tf@bound``: the temperature at the stated bound ``ln(6 * 51)`` for the largest punchcard used (``min``:
  50 cells and the scratchpad), where the construction still guarantees exactness;
* ``looped_tf@lambda1``: temperature 1, below the bound for every program's punchcard (the smallest, ``negate``, needs
  ``ln(6 * 13) = 4.4``): reads and writes blur across columns;
* ``looped_tf@random_alu``: the subtracting layer's first matrix (layer 4's ``fc1``) replaced by a seeded Gaussian
  matrix of the same Frobenius norm.

Each row also reports the layer count, the width ``d``, ``n`` (columns of the largest punchcard: ``min``'s 50 cells
and the scratchpad), the constructed weights (all and non-zero) and milliseconds per executed instruction.

The controls run with ``strict=False``: a run that faults (reads outside the memory) or overflows stops there and
counts as not exact instead of raising; they go through the task's ``run_programs`` with a 200-instruction limit (the
interpreter halts on every case within 61), since a broken machine may never halt.
"""
from __future__ import annotations

import time
from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_algorithmic_seq import data, task

from .model import LAYERS, PRESETS, TEMPERATURE, looped_transformer_computer, temperature_bound
from .plugin import CLAIM

LARGEST = max(len(data.assemble(p, {})[0]) for p in data.PROGRAMS.values())  # cells of the longest program (min: 50)
BOUND = temperature_bound(LARGEST + 1)
LOW = 1.0
ALU_LAYER = 3  # the fourth layer: subtraction, the <= 0 flag and overflow
CONTROL_STEPS = 200  # a broken machine may never halt; the interpreter halts on every case within 61 instructions


def _instructions(seed: int, cases: int) -> int:
    """Instructions the reference interpreter executes on the task's cases for ``seed`` (all programs)."""
    return sum(data.run(mem, max_steps=2_000)[1] for name in data.PROGRAMS
               for mem, _a, _e in data.program_cases(name, cases, seed=seed))


def machine_row(*, seed: int, quick: bool, temperature: float = TEMPERATURE, random_layer: int | None = None,
                strict: bool = True, max_steps: int | None = None, cases: int = task.SUBLEQ_CASES) -> dict[str, float]:
    """The task's subleq evaluation of the looped transformer (optionally with one layer's ``fc1`` randomised);
    with ``max_steps``, the task's ``run_programs`` with that step limit (for machines that may never halt) on
    ``cases`` inputs per program."""
    model = looped_transformer_computer(temperature=temperature, strict=strict)
    if random_layer is not None:
        w = model.layers[random_layer].fc1.weight
        with torch.no_grad():
            noise = torch.randn(w.shape, generator=torch.Generator().manual_seed(seed), dtype=w.dtype)
            w.copy_(noise * w.norm() / noise.norm())
    t0 = time.perf_counter()
    if max_steps is None:
        metrics = dict(task.evaluate(model, mode="subleq", seed=seed).metrics)
    else:
        metrics = task.run_programs(model, seed=seed, max_steps=max_steps, cases=cases)
    seconds = time.perf_counter() - t0
    steps = _instructions(seed, task.SUBLEQ_CASES if max_steps is None else cases)
    weights = [p for p in model.parameters()]
    return {**metrics, "layers": float(len(model.layers)), "d": float(model.d), "bits": float(model.bits),
            "n": float(LARGEST + 1), "weights": float(sum(p.numel() for p in weights)),
            "nonzero_weights": float(sum(int((p != 0).sum()) for p in weights)),
            "temperature": float(temperature), "instructions": float(steps),
            "ms_per_instruction": 1e3 * seconds / steps}


ROWS = [Row("looped_tf", machine_row, {}),
        Row("looped_tf@bound", machine_row, {"temperature": BOUND}),
        Row("looped_tf@lambda1", machine_row, {"temperature": LOW, "strict": False, "max_steps": CONTROL_STEPS}),
        Row("looped_tf@random_alu", machine_row, {"random_layer": ALU_LAYER, "strict": False,
                                                   "max_steps": CONTROL_STEPS})]

CHECKS = [Check("looped_tf", "exact", margin=1.0), Check("looped_tf@bound", "exact", margin=1.0),
          Check("looped_tf@lambda1", "exact", margin=0.5, higher=False),
          Check("looped_tf@random_alu", "exact", margin=0.5, higher=False)]

SETTINGS: dict[str, Any] = {"preset": "cpu", "bits": PRESETS["cpu"]["bits"], "layers_per_instruction": LAYERS,
                            "paper_layers": 13, "temperature": TEMPERATURE, "temperature_bound": BOUND,
                            "bound_formula": "ln(6 * columns): reads exact when 2 n e^(-2 lambda) < 1/2, writes when "
                                             "3 n e^(-lambda) < 1/2",
                            "largest_memory_cells": LARGEST, "low_temperature": LOW, "random_layer": ALU_LAYER + 1,
                            "control_max_steps": CONTROL_STEPS}

REPRODUCTION = Claim(
    plugin="looped-transformer-computer", claim=CLAIM, task="algorithmic_seq", seeds=(0, 1, 2, 3, 4), quick_seeds=(0,),
    rows=ROWS, checks=CHECKS, settings=SETTINGS, task_options={"mode": "subleq"},
    notes="margins fixed before the first recorded run. Exactness is the claim, so the machine's rows must reach "
          "exact = 1.0 (every run of every program ends in the interpreter's whole memory; margin 0 from perfect), at "
          f"the default temperature {TEMPERATURE:g} and at the stated sufficient bound ln(6 x {LARGEST + 1} columns) = "
          f"{BOUND:.3f}. The controls are the checks that can fail: the same construction at temperature {LOW:g} "
          "(below the bound for every program) and with the subtracting layer's first matrix replaced by a random one "
          "of the same norm must get at most half of the runs exact (margin 0.5: a machine that works would get all "
          "of them, a broken one should get almost none). The rows are deterministic given the seed, which draws the "
          "programs' inputs (20 per program per seed); ms_per_instruction is the evaluation's wall time over the "
          "instructions the interpreter executes (the machine runs the 20 inputs of a program as one batch).",
)
