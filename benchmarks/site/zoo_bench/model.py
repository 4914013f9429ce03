"""The benchmark model: timm's ResNet-50, built exactly as ``timm.create_model("resnet50")``."""
from __future__ import annotations


def bench_resnet50(num_classes: int = 1000):
    """``timm.create_model("resnet50", num_classes=num_classes)``.

    >>> import zoo
    >>> model = zoo.create("bench_resnet50")  # doctest: +SKIP
    """
    import timm

    return timm.create_model("resnet50", num_classes=num_classes)
