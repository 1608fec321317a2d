"""The command line, `evalcore`: one module per command; `main` parses, runs and translates errors once."""

from .main import main

__all__ = ["main"]
