"""``python -m zoo.hubserver --root DIR``: serve a local Hub."""

from .cli import main

raise SystemExit(main())
