"""Standard tasks: data, forward contract, metrics and baselines shared by every plugin on them."""
