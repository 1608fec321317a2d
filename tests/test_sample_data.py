"""The committed sample data is what the script makes: running scripts/make_sample_data.py writes every
file in sample_data/ byte for byte, and nothing else. sample_data/README.md is written by hand, not by
the script. The script takes several seconds (about 7 s of CPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make_sample_data.py"
SAMPLE = ROOT / "sample_data"
HAND_WRITTEN = {"README.md"}


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_script_reproduces_sample_data(tmp_path) -> None:
    out = tmp_path / "sample_data"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], cwd=tmp_path, check=False,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"make_sample_data.py failed:\n{done.stderr}"
    committed = [f for f in files_under(SAMPLE) if f not in HAND_WRITTEN]
    written = files_under(out)
    assert "seed_example/labels.json" in committed
    extra = [f for f in written if f not in committed]
    assert not extra, f"the script wrote files sample_data/ lacks: {extra}"
    missing = [f for f in committed if f not in written]
    assert not missing, f"the script did not write sample_data/{missing[0]} (and {len(missing) - 1} more)"
    differing = [f for f in committed if (out / f).read_bytes() != (SAMPLE / f).read_bytes()]
    assert not differing, (f"sample_data/{differing[0]} differs from what the script writes "
                           f"({len(differing)} file(s) differ: {differing}); rerun scripts/make_sample_data.py")
