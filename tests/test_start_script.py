"""scripts/start.sh refuses to serve the network without sign-in, before it installs or starts anything; the check
itself (scripts/serving_check.py) lets loopback through, and the network only with sign-in or the loud override."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "scripts" / "serving_check.py"
AUTH = """[auth]
redirect_uri = "https://evalcore.example.com/oauth2callback"
cookie_secret = "a-long-random-secret"

[auth.keycloak]
client_id = "evalcore"
client_secret = "s3cret"
server_metadata_url = "https://sso.example.com/realms/acme/.well-known/openid-configuration"
"""


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALCORE_")}
    return {**env, "HOME": str(tmp_path / "home"), **extra}  # no ~/.streamlit/secrets.toml of the person testing


def check(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    # -S: no site-packages, as when start.sh runs the check before the virtual environment exists
    return subprocess.run([sys.executable, "-S", str(CHECK), *args], capture_output=True, text=True, timeout=60,
                          env=clean_env(tmp_path, **extra), cwd=tmp_path)


def test_start_refuses_a_network_address_without_sign_in_and_starts_nothing(tmp_path) -> None:
    empty = tmp_path / "secrets.toml"
    empty.write_text("[evalcore]\nowners = [\"lee@example.com\"]\n")  # roles alone are not sign-in
    done = subprocess.run(["bash", str(ROOT / "scripts" / "start.sh"), "--secrets.files", str(empty)],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=clean_env(tmp_path, EVALCORE_HOST="0.0.0.0", PYTHON=sys.executable))
    assert done.returncode == 3, done.stderr
    assert "refusing to serve the dashboard on 0.0.0.0 without sign-in: no [auth] section" in done.stderr
    assert "EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN=1" in done.stderr
    assert "evalcore dashboard:" not in done.stdout  # never got as far as starting


def test_loopback_passes_and_the_network_needs_sign_in_or_the_loud_override(tmp_path) -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert check(tmp_path, host).returncode == 0, host
    assert check(tmp_path, "127.0.0.1", "--server.address", "0.0.0.0").returncode == 3  # the argument wins
    secrets = tmp_path / "auth.toml"
    secrets.write_text(AUTH)
    assert check(tmp_path, "0.0.0.0", "--secrets.files", str(secrets)).returncode == 0  # a named provider
    half = tmp_path / "half.toml"
    half.write_text(AUTH.replace('cookie_secret = "a-long-random-secret"\n', ""))
    refused = check(tmp_path, "10.0.0.5", "--secrets.files", str(half))
    assert refused.returncode == 3 and "[auth] lacks cookie_secret" in refused.stderr
    opened = check(tmp_path, "0.0.0.0", "--secrets.files", str(half), EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN="1")
    assert opened.returncode == 0 and "WITHOUT SIGN-IN" in opened.stderr


def test_plain_http_sign_in_on_the_network_is_warned_about(tmp_path) -> None:
    secrets = tmp_path / "auth.toml"
    secrets.write_text(AUTH.replace("https://evalcore.example.com", "http://evalcore.example.com"))
    done = check(tmp_path, "0.0.0.0", "--secrets.files", str(secrets))
    assert done.returncode == 0 and "sign-in cookies travel unencrypted" in done.stderr


def test_a_secrets_file_that_cannot_be_read_is_refused_even_beside_a_good_one(tmp_path) -> None:
    """Streamlit reads no secrets file when one of them cannot be parsed: sign-in would silently be off."""
    good, broken = tmp_path / "auth.toml", tmp_path / "broken.toml"
    good.write_text(AUTH)
    broken.write_text("[evalcore\nowners = [\n")
    done = check(tmp_path, "0.0.0.0", "--secrets.files", f"{broken},{good}")
    assert done.returncode == 3 and "a secrets file cannot be read" in done.stderr, done.stderr
    assert "broken.toml" in done.stderr


BROKEN_SECRETS = [  # issue 24, item 8: each was a Python traceback (and `streamlit run` died at start)
    ("auth-text.toml", b'auth = "yes"\n', "[auth]: expected a table"),
    ("auth-list.toml", b"auth = [1, 2]\n", "[auth]: expected a table"),
    ("utf16.toml", "[auth]\nredirect_uri = 'x'\n".encode("utf-16"), "not UTF-8 text"),  # starts with FF FE
    ("typed-auth.toml", AUTH.replace('client_secret = "s3cret"', "client_secret = 12345").encode(),
     "[auth.keycloak].client_secret: expected text in quotes, got a number"),
    ("typed-evalcore.toml", (AUTH + '\n[evalcore]\nowners = [["lee@example.com"]]\n').encode(),
     "[evalcore].owners: expected each entry to be an email address"),
    ("evalcore-text.toml", b'evalcore = "yes"\n' + AUTH.encode(), "expected a table of roles"),
]


@pytest.mark.parametrize(("name", "content", "expected"), BROKEN_SECRETS, ids=[b[0] for b in BROKEN_SECRETS])
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_broken_secrets_file_is_one_sentence_and_exit_3_never_a_traceback(tmp_path, host, name, content,
                                                                            expected) -> None:
    secrets = tmp_path / name
    secrets.write_bytes(content)
    done = check(tmp_path, host, "--secrets.files", str(secrets))
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert expected in done.stderr and name in done.stderr
    assert "12345" not in done.stderr  # a secret's value is never printed
