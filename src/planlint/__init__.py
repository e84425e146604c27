"""planlint: lint ML post-training experiment plans."""

__version__ = "0.1.0"
