"""sparselint: static checks for PyTorch sparse-tensor and autograd hazards."""
from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("sparselint")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
