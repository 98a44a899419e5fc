"""sparselint: static checks for PyTorch sparse-tensor and autograd hazards."""

# A literal, not `importlib.metadata`: reading the installed metadata cost 28 ms per run.
# pyproject.toml reads the package version from here.
__version__ = "0.1.0"
