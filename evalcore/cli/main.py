"""The ``evalcore`` command line: parse, run the command's handler, and translate every typed error here, once.

Exit status: 0 success, 2 bad input or usage, 1 anything else (docs/formats.md).

Each command lives in its own module of this package (`evaluate`, `compare`, `answers`, `budget`, `audit`,
`judge` with `judge_panel`, `sample`, `workspace`, `report`, `vectors`), and is imported only when it runs: `_handler`
is the command line's one lazy import, so
``evalcore evaluate`` loads neither scipy.stats, the tokenizer, the meeting report nor the store.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from ..errors import EvalcoreError
from ..safe_text import terminal_safe
from .parser import EXIT_BAD_INPUT, EXIT_FAILURE, build_parser

__all__ = ["build_parser", "main"]


def _module(name: str) -> ModuleType:
    """A module of this package, imported now (the first time): see `_handler`."""
    return importlib.import_module(f".{name}", __package__)


def _handler(args: argparse.Namespace) -> Callable[[], int]:
    """The command to run, as the parser named it (``"module:function"``), its module imported only now.

    A scoring command (``scores``: evaluate, compare, budget, audit, report) is also given the loader of
    `recording`, its side of the workspace (a --reveal, ``evaluate --save``, ``audit --flag``), imported on first
    use: a command line that does not ask for the workspace never loads the store.
    """
    module, _, function = args.handler.partition(":")
    run = getattr(_module(module), function)
    if getattr(args, "scores", False):
        return lambda: run(args, lambda: _module("recording"))
    return lambda: run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, run, and turn every error into a one-line message and exit code."""
    args = build_parser().parse_args(argv)
    try:
        return _handler(args)()
    except EvalcoreError as exc:
        print(terminal_safe(f"evalcore: error: {exc}"), file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_BAD_INPUT)  # workspace failures (busy, damaged) exit 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last line of defence: no traceback for users
        if os.environ.get("EVALCORE_DEBUG"):
            raise
        print(terminal_safe(f"evalcore: internal error: {type(exc).__name__}: {exc} (set EVALCORE_DEBUG=1 for "
                            "details)"), file=sys.stderr)
        return EXIT_FAILURE
