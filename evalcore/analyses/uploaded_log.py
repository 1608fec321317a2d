"""A query log that came as bytes (an upload), sampled as ``evalcore sample`` samples a file on disk.

`evalcore.logs.sampling.sample_log` reads a path (DuckDB reads the file out of core), so the bytes are written to a
private temporary folder under the upload's own name, sampled, and removed at once. Every name and message the
sample carries says the upload's name, never the temporary folder: what a person reads matches what they uploaded.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from ..errors import EvalcoreError, InputError
from ..logs.sampling import LogSample, sample_log
from ..readers.labels import LabelSet


def _plain_name(name: str) -> str:
    """The last part of an uploaded file's name, safe as a file name in a folder of its own."""
    base = Path(str(name).replace("\\", "/")).name.strip() or "log"
    return base if base not in (".", "..") else "log"


def sample_log_bytes(data: bytes, name: str, *, log_format: str | None = None, labels: LabelSet | None = None,
                     n: int | None = None, seed: int = 0, allocation: str = "proportional") -> LogSample:
    """`sample_log` of the log ``data`` uploaded as ``name``: the same counts, strata and sample as the command on
    that file. An error names ``name`` (the one-line message of the core, as the command prints it)."""
    if not data:
        raise InputError("a query log (the file is empty)", source=name)
    with tempfile.TemporaryDirectory(prefix="evalcore-log-") as folder:
        path = Path(folder) / _plain_name(name)
        path.write_bytes(data)
        where = str(path)
        try:
            found = sample_log(where, log_format=log_format, labels=labels, n=n, seed=seed, allocation=allocation)
        except EvalcoreError as exc:
            raise EvalcoreError(str(exc).replace(where, name)) from None
    shape = found.counts.shape
    found.counts.shape = replace(shape, log=replace(shape.log, name=name))
    found.warnings = [replace(w, message=w.message.replace(where, name)) for w in found.warnings]
    return found
