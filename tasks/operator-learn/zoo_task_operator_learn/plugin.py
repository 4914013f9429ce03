"""zoo plugin of the task distribution: the specs of operator_learn and function_generate (torch-free; the code is
in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="operator_learn",
        contract="by the model's input_kind (default 'grid'): grid: model(a: (B, C_in, *grid)) -> (B, C_out, *grid) at "
                 "any grid size; points: model(values: (B, N, C_in), coords: (B, N, d)) -> (B, N, C_out); samples: "
                 "model(samples: (B, N, 2), mask: (B, N), t_query: (B, M)) -> (B, M, 1); curve: model(x: (B, T), "
                 "t: (T,)) -> (B, 1); optional model.fit(train, *, steps, budget_s, seed, progress) -> dict",
        evaluate="zoo_task_operator_learn.task:evaluate",
        example_input="zoo_task_operator_learn.task:example_input",
        check_output="zoo_task_operator_learn.task:check_output",
        describe="zoo_task_operator_learn.task:describe",
        baselines=("fno", "unet", "mlp_grid", "fpca_mlp", "linear", "mlp_interp"),
        description="learn solution operators from data made by numerical solvers in the task (1D viscous Burgers "
                    "64 -> 128, 2D Darcy 32 -> 64, antiderivative, 1D Poisson) and functional regression (function-"
                    "on-function on irregular samples, scalar-on-function); Adam on the relative L2 loss under a step/"
                    "time budget; relative L2 at the training resolution, at 2x (zero-shot super-resolution) and on "
                    "irregular points, params, seconds per step; baselines FNO, U-Net at matched params, MLP on grid "
                    "values, FPCA + MLP, linear / MLP on interpolated curves",
    ),
    TaskSpec(
        name="function_generate",
        contract="model.fit(values: (n, N, C), coords: (n, N, d), *, steps, seed, progress) -> dict; "
                 "model.sample(coords: (N, d), n, *, seed) -> (n, N, C); optional model.condition(obs_coords, "
                 "obs_values, query_coords, n, *, seed) -> (n, M, C)",
        evaluate="zoo_task_operator_learn.function_generate:evaluate",
        describe="zoo_task_operator_learn.function_generate:describe",
        baselines=("gp",),
        description="learn a distribution over functions from samples on random irregular 1D points (RBF / Matern "
                    "GP, a non-Gaussian process), sample on another point distribution: mean error, covariance "
                    "error, energy distance, marginal KS against exact samples, conditional regression against "
                    "the exact GP posterior; baseline: a GP with hyperparameters fitted by marginal likelihood",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
