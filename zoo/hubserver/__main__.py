"""``python -m zoo.hubserver --root DIR``: serve a local Hub."""

from . import main

raise SystemExit(main())
