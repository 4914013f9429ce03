"""Object-centric general value functions from pixels (Nath et al. 2023) for zoo: per-object GVFs learned by TD as the
policy's representation."""

__version__ = "0.1.0"
