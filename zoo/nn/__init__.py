"""Reference networks and layers that tasks and several plugins share (imports torch)."""
