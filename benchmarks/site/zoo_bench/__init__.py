"""zoo-bench: a benchmark-only plugin (not for users): a ~100 MB model for the pretrained-load benchmark."""
