"""zoo task distribution: rep_metrics: representation similarity statistics (``similarity``: CKA, CCA, RSA; numpy
only) and activation sources with planted relations (``sources``: seeded digits classifiers, their random-init
twins, raw pixels) for the representation-metric tools.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
