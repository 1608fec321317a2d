"""The package version, in one place (the package root, the workspace and reports read it)."""

__version__ = "0.1.0"
