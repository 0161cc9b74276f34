"""designer: optimizing network designer for GPU training clusters."""

__version__ = "0.1.0"
