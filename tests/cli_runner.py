"""Run the ``evalcore`` command line in this process, as a user would in a shell, and get what a subprocess gives.

``run_cli("evaluate", "--labels", path, ...)`` calls `evalcore.cli.main` with stdout, stderr and stdin redirected
(no pytest capture fixture needed), argparse's exits (usage errors, ``--help``) turned into a return code, and
the environment variables and working folder given applied for the call only. It returns a
`subprocess.CompletedProcess`, so a test reads ``returncode``, ``stdout`` and ``stderr`` either way.

A handful of tests still start a real process on purpose (tests/cli/test_cli.py: the exit status of bad input
without a traceback, ``--help``, the installed ``evalcore`` command; tests/test_docs.py: the command examples of the README and docs/).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from evalcore.cli import main

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def environment(values: Mapping[str, str] | None) -> Iterator[None]:
    """Set ``values`` in ``os.environ`` for the block, then put every variable back as it was."""
    before = {name: os.environ.get(name) for name in values or {}}
    try:
        os.environ.update({name: str(value) for name, value in (values or {}).items()})
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def standard_input(text: str | None) -> Iterator[None]:
    """``sys.stdin`` reads ``text`` (nothing when None) for the block."""
    before = sys.stdin
    sys.stdin = io.StringIO(text or "")
    try:
        yield
    finally:
        sys.stdin = before


def run_cli(*args: object, env: Mapping[str, str] | None = None, stdin: str | None = None,
            cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """``evalcore ARGS...`` in-process: its exit status, stdout and stderr. ``env`` adds to (never replaces) the
    environment; ``cwd`` defaults to the project root, where the subprocess tests ran."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(environment(env))
        stack.enter_context(contextlib.chdir(cwd or ROOT))
        stack.enter_context(standard_input(stdin))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if isinstance(exc.code, str):  # what the interpreter does with sys.exit("message")
                print(exc.code, file=sys.stderr)
    return subprocess.CompletedProcess(["evalcore", *argv], code, out.getvalue(), err.getvalue())
