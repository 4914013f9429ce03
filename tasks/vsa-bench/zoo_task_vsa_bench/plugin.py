"""zoo plugin of the task distribution: the spec of vsa_bench (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="vsa_bench",
        contract="a model sets vsa_kind: 'factorize': factorize(s (B, D), codebooks: list[(M, D)], iters) -> "
                 "(indices (B, F) long, iterations (B,) long); 'memory': atoms(alphabet, dim, seed), "
                 "bundle(atoms, sets (B, k)) -> memory, contains(atoms, memory, items (B, Q)) -> (B, Q) bool, "
                 "intersection(atoms, memory_a, memory_b) -> (B,); 'encode': encode(x (B, N, d_in), y (B, N, d_out), "
                 "mask (B, N)) -> (B, D) complex, optional decode(z, xq (B, M, d_in)) -> (B, M, d_out); "
                 "forward(batch dict) runs the kind's contract (zoo_task_vsa_bench.contract)",
        evaluate="zoo_task_vsa_bench.task:evaluate",
        example_input="zoo_task_vsa_bench.task:example_input",
        check_output="zoo_task_vsa_bench.task:check_output",
        describe="zoo_task_vsa_bench.task:describe",
        baselines=("classic_resonator", "map_i_bundle", "fpe_sum"),
        description="vector-symbolic architectures on seeded synthetic problems: factorisation of bound bipolar "
                    "composites (accuracy, sweeps to converge; classic resonator of Frady et al. 2020), set "
                    "membership and intersection-size estimation versus dimension (MAP-I sum bundle), and "
                    "sampling invariance of function encodings (N=50 vs 500, uniform vs skewed; plain "
                    "fractional-power sum)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
