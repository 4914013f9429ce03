"""zoo task distribution: char_lm: character-level language modelling on the Python standard library's text, GPT baselines.

Torch-free on import: the task code lives in its modules, imported when a task runs.
"""

__version__ = "0.1.0"
