"""Refuse to serve the dashboard to the network without sign-in, or at all with a broken secrets file: run by
scripts/start.sh before anything else.

    python3 scripts/serving_check.py HOST [streamlit run arguments ...]

HOST is where the server will listen (EVALCORE_HOST; a ``--server.address`` among the arguments wins, as it does
for Streamlit). Every secrets file Streamlit reads (``--secrets.files``, else ~/.streamlit/secrets.toml,
.streamlit/secrets.toml, dashboard/.streamlit/secrets.toml) must be UTF-8 TOML with a well-typed ``[auth]`` and
``[evalcore]`` (Streamlit stops with a traceback as it starts on ``auth = "yes"``, and reads no file at all when
one cannot be parsed). Then a loopback address (127.0.0.1, ::1, localhost) passes: one person on this machine. Any
other address passes only when sign-in is configured: an ``[auth]`` section with ``redirect_uri``,
``cookie_secret`` and a provider's ``client_id``, ``client_secret`` and ``server_metadata_url``, or when the
operator sets EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN=1. Exit 0 to go on, 3 refused (the reason on stderr, one
line). Standard library only: it runs before the virtual environment is set up.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import sys
import tomllib
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OVERRIDE = "EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN"
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
REFUSED = 3


def option(args: list[str], name: str) -> list[str]:
    """Every value given to ``--name VALUE`` or ``--name=VALUE`` among ``args``, in order."""
    found = []
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            found.append(args[i + 1])
        elif arg.startswith(name + "="):
            found.append(arg.split("=", 1)[1])
    return found


def is_loopback(host: str) -> bool:
    text = host.strip().strip("[]")
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False  # a name or an empty address (every interface): the network


def secrets_files(args: list[str]) -> list[Path]:
    given = [Path(p) for value in option(args, "--secrets.files") for p in value.split(",") if p.strip()]
    if given:
        return given
    return [Path.home() / ".streamlit" / "secrets.toml", ROOT / ".streamlit" / "secrets.toml",
            ROOT / "dashboard" / ".streamlit" / "secrets.toml"]


def access_checks() -> types.ModuleType:
    """evalcore/access.py, whose checks of a secrets file the app uses too, loaded without the evalcore package (its
    __init__ needs numpy and pandas, installed only after this check); access.py and the errors module it imports
    use the standard library alone (tests/test_start_script.py runs this check without site-packages)."""
    package = types.ModuleType("_evalcore_access")
    package.__path__ = [str(ROOT / "evalcore")]
    sys.modules.setdefault("_evalcore_access", package)
    return importlib.import_module("_evalcore_access.access")


def secrets_problem(files: list[Path]) -> str | None:
    """The first secrets file that cannot be used, and why, in one sentence (None: every existing one can)."""
    check = access_checks().secrets_problem
    for path in files:
        if not path.exists():
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            return f"{path}: cannot be read ({exc.strerror})."
        problem = check(data, str(path))
        if problem is not None:
            return problem
    return None


def auth_section(files: list[Path]) -> dict:
    """The ``[auth]`` tables of ``files`` merged (later files win, as in Streamlit); every file already checked by
    `secrets_problem`."""
    merged: dict = {}
    for path in files:
        if path.is_file():
            merged.update(tomllib.loads(path.read_text(encoding="utf-8")).get("auth") or {})
    return merged


def sign_in_missing(auth: dict) -> str | None:
    """What sign-in lacks (None: configured)."""
    if not auth:
        return "no [auth] section"
    missing = [key for key in ("redirect_uri", "cookie_secret") if not auth.get(key)]
    providers = [auth] + [value for value in auth.values() if isinstance(value, dict)]
    if not any(all(p.get(key) for key in PROVIDER_KEYS) for p in providers):
        missing.append("a provider with " + ", ".join(PROVIDER_KEYS))
    return f"[auth] lacks {', '.join(missing)}" if missing else None


def main(argv: list[str]) -> int:
    host = (option(argv[1:], "--server.address") or [argv[0] if argv else "127.0.0.1"])[-1]
    files = secrets_files(argv[1:])
    problem = secrets_problem(files)
    if problem is not None:  # Streamlit would stop with a traceback, or read none of the files (sign-in off)
        print(f"evalcore: refusing to start the dashboard on {host}: a secrets file cannot be read: {problem} Fix the "
              "file and start again (Streamlit would stop as it starts, or read none of the secrets files and leave "
              "sign-in off).", file=sys.stderr)
        return REFUSED
    if is_loopback(host):
        return 0
    auth = auth_section(files)
    missing = sign_in_missing(auth)
    if missing is None:
        redirect = str(auth.get("redirect_uri", ""))
        if redirect.startswith("http://"):
            print(f"evalcore: warning: redirect_uri is {redirect}: sign-in cookies travel unencrypted. Serve the "
                  "dashboard behind HTTPS (README, Team server) and use an https:// redirect_uri.", file=sys.stderr)
        return 0
    if os.environ.get(OVERRIDE, "").strip() == "1":
        print(f"evalcore: WARNING: serving on {host} WITHOUT SIGN-IN ({OVERRIDE}=1): anyone who can reach this "
              "machine sees every saved label set, run and evaluation, and can delete them and reveal the holdout.",
              file=sys.stderr)
        return 0
    read = ", ".join(str(p) for p in files)
    print(f"evalcore: refusing to serve the dashboard on {host} without sign-in: {missing} in the secrets files "
          f"read ({read}). Anyone on the network could see every saved label set, run and evaluation, delete "
          f"them and reveal the holdout. Configure sign-in (README, Team server: [auth] and [evalcore] in "
          f".streamlit/secrets.toml), or serve on 127.0.0.1; to serve the network open anyway, set {OVERRIDE}=1.",
          file=sys.stderr)
    return REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
