"""A tiny OpenID Connect provider for the sign-in browser tests, on 127.0.0.1 over plain HTTP (loopback only).

It serves what a real provider serves for the authorization-code flow: the discovery document
(``/.well-known/openid-configuration``), ``/authorize`` (a page with one button per test user; a click approves
that user and redirects back with a one-time code), ``/token`` (checks the client's secret and the code, returns an
ID token signed RS256 with joserfc, the JOSE library by Authlib's authors that Authlib's own OIDC client verifies
with, carrying the nonce the client sent) and ``/jwks`` (the public key). No password, no consent: the person
choosing a button is the test. A plain module (the browser test imports it).
"""

from __future__ import annotations

import base64
import html
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from joserfc import jwt
from joserfc.jwk import RSAKey

CLIENT_ID = "evalcore-test"
CLIENT_SECRET = "a-client-secret-for-tests-only"


class Provider:
    """One provider on a free port of 127.0.0.1 (``url``), for ``users`` (email addresses); `stop` ends it."""

    def __init__(self, users: list[str]) -> None:
        self.users = list(users)
        self.key = RSAKey.generate_key(2048)
        self.kid = "test-key-1"
        self.codes: dict[str, dict] = {}  # one-time code -> what the token endpoint issues for it
        self.issued: list[str] = []  # emails an ID token was issued for, in order
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet: the test output is for failures
                pass

            def do_GET(self) -> None:
                provider._get(self)

            def do_POST(self) -> None:
                provider._post(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-oidc-provider", daemon=True)
        self.thread.start()

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------------ endpoints

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        parsed = urlparse(handler.path)
        if parsed.path == "/.well-known/openid-configuration":
            _json(handler, {
                "issuer": self.url, "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token", "jwks_uri": f"{self.url}/jwks",
                "response_types_supported": ["code"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"], "scopes_supported": ["openid", "email", "profile"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "claims_supported": ["sub", "email", "email_verified", "name"],
            })
        elif parsed.path == "/jwks":
            public = dict(self.key.as_dict(private=False), kid=self.kid, use="sig", alg="RS256")
            _json(handler, {"keys": [public]})
        elif parsed.path == "/authorize":
            query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
            if query.get("client_id") != CLIENT_ID or query.get("response_type") != "code":
                _send(handler, 400, "text/plain", b"unknown client or response type")
                return
            hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                             for k, v in query.items())
            buttons = "".join(f'<button name="user" value="{html.escape(u)}">Sign in as {html.escape(u)}</button>'
                              for u in self.users)
            page = f"<!doctype html><title>Test sign-in</title><form method=post action=/authorize>{hidden}{buttons}</form>"
            _send(handler, 200, "text/html; charset=utf-8", page.encode())
        else:
            _send(handler, 404, "text/plain", b"not found")

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(handler.rfile.read(length).decode()).items()}
        path = urlparse(handler.path).path
        if path == "/authorize":
            user = form.get("user")
            if user not in self.users:
                _send(handler, 400, "text/plain", b"unknown user")
                return
            code = secrets.token_urlsafe(24)
            self.codes[code] = {"email": user, "nonce": form.get("nonce"), "redirect_uri": form["redirect_uri"]}
            target = form["redirect_uri"] + "?" + urlencode({"code": code, "state": form.get("state", "")})
            handler.send_response(302)
            handler.send_header("Location", target)
            handler.end_headers()
        elif path == "/token":
            client_id, client_secret = form.get("client_id"), form.get("client_secret")
            basic = handler.headers.get("Authorization", "")
            if basic.startswith("Basic "):
                client_id, _, client_secret = base64.b64decode(basic[6:]).decode().partition(":")
            grant = self.codes.pop(form.get("code", ""), None)
            if (client_id, client_secret) != (CLIENT_ID, CLIENT_SECRET) or grant is None \
                    or form.get("grant_type") != "authorization_code" or form.get("redirect_uri") != grant["redirect_uri"]:
                _json(handler, {"error": "invalid_grant"}, 400)
                return
            now = int(time.time())
            claims = {"iss": self.url, "sub": grant["email"], "aud": CLIENT_ID, "iat": now, "exp": now + 600,
                      "email": grant["email"], "email_verified": True, "name": grant["email"].split("@")[0]}
            if grant["nonce"]:
                claims["nonce"] = grant["nonce"]
            token = jwt.encode({"alg": "RS256", "kid": self.kid}, claims, self.key)
            self.issued.append(grant["email"])
            _json(handler, {"access_token": secrets.token_urlsafe(24), "token_type": "Bearer", "expires_in": 600,
                            "id_token": token})
        else:
            _send(handler, 404, "text/plain", b"not found")


def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Cache-Control", "no-store")
    handler.end_headers()
    handler.wfile.write(body)


def _json(handler: BaseHTTPRequestHandler, value: dict, status: int = 200) -> None:
    _send(handler, status, "application/json", json.dumps(value).encode())
