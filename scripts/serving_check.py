"""Refuse to serve the dashboard to the network without sign-in: run by scripts/start.sh before anything else.

    python3 scripts/serving_check.py HOST [streamlit run arguments ...]

HOST is where the server will listen (EVALCORE_HOST; a ``--server.address`` among the arguments wins, as it does
for Streamlit). A loopback address (127.0.0.1, ::1, localhost) passes: one person on this machine. Any other
address passes only when sign-in is configured: an ``[auth]`` section with ``redirect_uri``, ``cookie_secret`` and a
provider's ``client_id``, ``client_secret`` and ``server_metadata_url`` in a secrets file Streamlit reads
(``--secrets.files``, else ~/.streamlit/secrets.toml, .streamlit/secrets.toml, dashboard/.streamlit/secrets.toml),
or when the operator sets EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN=1. Exit 0 to go on, 3 refused (the reason on
stderr). Standard library only: it runs before the virtual environment is set up.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import tomllib
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


def auth_section(files: list[Path]) -> tuple[dict, list[str]]:
    """The ``[auth]`` tables of ``files`` merged (later files win, as in Streamlit), and problems reading them."""
    merged: dict = {}
    problems = []
    for path in files:
        if not path.is_file():
            continue
        try:
            with open(path, "rb") as handle:
                merged.update(tomllib.load(handle).get("auth") or {})
        except (OSError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"{path}: {exc}")
    return merged, problems


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
    if is_loopback(host):
        return 0
    files = secrets_files(argv[1:])
    auth, problems = auth_section(files)
    if problems:  # Streamlit reads none of the files when one cannot be parsed: sign-in would be off
        print(f"evalcore: refusing to serve the dashboard on {host}: a secrets file cannot be read "
              f"({'; '.join(problems)}), and with it Streamlit would read none of them, leaving sign-in off. Fix the "
              "file (TOML syntax) and start again.", file=sys.stderr)
        return REFUSED
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
    extra = f" ({'; '.join(problems)})" if problems else ""
    print(f"evalcore: refusing to serve the dashboard on {host} without sign-in: {missing} in the secrets files "
          f"read ({read}){extra}. Anyone on the network could see every saved label set, run and evaluation, delete "
          f"them and reveal the holdout. Configure sign-in (README, Team server: [auth] and [evalcore] in "
          f".streamlit/secrets.toml), or serve on 127.0.0.1; to serve the network open anyway, set {OVERRIDE}=1.",
          file=sys.stderr)
    return REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
