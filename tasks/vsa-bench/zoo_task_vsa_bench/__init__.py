"""zoo task distribution: vsa_bench: vector-symbolic architectures on seeded synthetic problems (factorisation
with the classic resonator, set membership and intersection versus dimension, function-encoding invariance).

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
