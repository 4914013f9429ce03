"""zoo task task_merge: merge fine-tuned variants of one pretrained network (task arithmetic, TIES, ...)."""

__version__ = "0.1.0"
