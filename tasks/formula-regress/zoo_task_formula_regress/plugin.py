"""zoo plugin of the task distribution: the specs of formula_regress (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS: list = [
    TaskSpec(
        name="formula_regress",
        contract="model(x: (B, d) in [-1, 1]) -> (B, 1); builders take in_features (default 2) and the task "
                 "rebuilds the model per formula with zoo.create(model.zoo.name, **{**model.zoo.model_args, "
                 "'in_features': d})",
        evaluate="zoo_task_formula_regress.task:evaluate",
        example_input="zoo_task_formula_regress.task:example_input",
        check_output="zoo_task_formula_regress.task:check_output",
        describe="zoo_task_formula_regress.task:describe",
        baselines=("mlp", "kan"),
        description="symbolic formulas of the KAN paper (toy, special functions, Feynman), 1000/1000 fixed "
                    "points, full-batch Adam for a step budget; relative RMSE per formula, mean and geometric "
                    "mean, next to an MLP and a B-spline KAN at the model's parameter count; formula= also takes your own "
                    "Formula(name, fn, n_vars, domain)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
