"""zoo hooks for the benchmark-only plugin: specs only (no torch import)."""
from __future__ import annotations

from zoo import ModelSpec, WeightsSpec, hookimpl

REPO = "zoo-bench/bench-resnet50"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="bench_resnet50", builder="zoo_bench.model:bench_resnet50",
        description="timm ResNet-50 (25.6 M parameters, ~102 MB in float32), for benchmarks/ only",
        weights={"bench": WeightsSpec(repo=REPO, description="random weights pushed by benchmarks/run.py to a local hub")},
    )]
