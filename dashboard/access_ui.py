"""Who is using the dashboard and what they may do: sign-in, the person's role, and the one check every control uses.

Sign-in is Streamlit's own OpenID Connect (``st.login`` / ``st.user``), configured by the ``[auth]`` section of
``.streamlit/secrets.toml``; the roles (and a workspace per team) by its ``[evalcore]`` section, read by
`evalcore.access.parse_access`. Without ``[auth]`` (one person on 127.0.0.1) nothing changes: that person is the
owner, recorded under the server's login name. With it, `gate` shows a sign-in screen before any page, and a
person on no list of ``[evalcore]`` sees why and nothing else.

Pages ask `refusal(action)` at each control that changes the workspace and disable the control with the reason as
its help; the workflows (`evalcore.workflows`) check the same role again, so a hidden button is not the protection.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

import streamlit as st

from evalcore.access import (
    ACTIONS,
    AccessConfig,
    Actor,
    Membership,
    Role,
    auth_problem,
    local_actor,
    parse_access,
    secrets_problem,
    signed_in_address,
)
from evalcore.errors import EvalcoreError, NotPermitted
from evalcore.safe_text import md_text
from evalcore.store.workspace import default_location


def _secrets_section(name: str) -> Any:
    """A section of the server's secrets (None when there is no secrets file or no such section)."""
    try:
        if not st.secrets.load_if_toml_exists():
            return None
        found = st.secrets.get(name)
    except Exception:  # an unreadable secrets file: Streamlit's own auth reports it; here it means "not configured"
        return None
    return found.to_dict() if hasattr(found, "to_dict") else found


OPEN_OVERRIDE = "EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN"
"""The operator's explicit, loudly named choice to serve the network without sign-in (scripts/start.sh checks it
too)."""


def _secrets_problem() -> str | None:
    """Why the server's secrets cannot be used, in one sentence naming the file (by name, never its folder): a file
    Streamlit cannot read (it then reads none of them: sign-in would silently be off), not UTF-8, not TOML, or a
    wrongly typed ``[auth]`` (`evalcore.access.auth_problem`). None when they can, or there are none."""
    try:
        loaded = st.secrets.load_if_toml_exists()
    except Exception:  # noqa: BLE001 - Streamlit lets its file reading's errors through (a UnicodeDecodeError)
        loaded = False
    if loaded:
        return auth_problem(_secrets_section("auth"), "secrets.toml")
    existing = [Path(f) for f in (st.get_option("secrets.files") or []) if Path(f).is_file()]
    for path in existing:
        try:
            problem = secrets_problem(path.read_bytes(), path.name)
        except OSError as exc:
            problem = f"{path.name}: cannot be read ({exc.strerror})."
        if problem is not None:
            return problem
    return f"{', '.join(p.name for p in existing)}: Streamlit cannot read it." if existing else None


def _served_beyond_this_machine() -> bool:
    """Whether the server listens on an address other machines reach (not loopback)."""
    address = str(st.get_option("server.address") or "").strip().strip("[]")
    if address.lower() == "localhost":
        return False
    try:
        return not ipaddress.ip_address(address).is_loopback
    except ValueError:
        return True  # empty (every interface), a hostname or anything else: reachable


def misconfigured() -> str | None:
    """Why this server must not show any page (a secrets file that cannot be used, or the network served without
    sign-in and without the operator's override), or None; Markdown, the file's own text escaped."""
    problem = _secrets_problem()
    if problem:
        return (f"The server's secrets cannot be used, so sign-in and the roles are off: {md_text(problem)} The "
                "operator fixes the file and restarts the server.")  # the problem quotes the file: shown as written
    if not sign_in_configured() and _served_beyond_this_machine() and os.environ.get(OPEN_OVERRIDE, "") != "1":
        return ("This server listens on the network but has no sign-in configured. The operator configures sign-in "
                f"(README, Team server), serves on 127.0.0.1, or sets {OPEN_OVERRIDE}=1 to serve it open.")
    return None


def sign_in_configured() -> bool:
    """Whether the server has sign-in (an ``[auth]`` section in its secrets)."""
    return bool(_secrets_section("auth"))


def providers() -> list[str | None]:
    """The sign-in providers of ``[auth]``: None for one configured at its top level (``client_id`` there), then each
    named one (``[auth.google]``, ``[auth.keycloak]``), in the file's order."""
    auth = _secrets_section("auth") or {}
    named = [name for name, value in auth.items() if isinstance(value, dict) and value.get("client_id")]
    return ([None] if auth.get("client_id") else []) + named


def roles() -> AccessConfig:
    """The ``[evalcore]`` roles of the server (`evalcore.errors.AccessConfigError` when they cannot be read)."""
    return parse_access(_secrets_section("evalcore"), "secrets.toml [evalcore]").with_default(default_location())


def _signed_in_email() -> str | None:
    user = st.user
    if not user.get("is_logged_in"):
        return None
    if user.get("email_verified") is not True:  # an address the provider has not vouched for names no one (a
        return None                              # provider that leaves the claim out may let people choose it)
    email = user.get("email")  # compared and recorded as written, ASCII case aside: a look-alike is refused
    return signed_in_address(str(email)) if email else None


def membership() -> Membership | None:
    """The signed-in person's team, role and workspace (None: not signed in, or on no list)."""
    email = _signed_in_email()
    return roles().membership(email) if email else None


def actor() -> Actor:
    """The person using this session: the signed-in person with their role, or, without sign-in configured, the
    owner named by the server's login name. Only called behind `gate`, which stops a page for anyone else."""
    if not sign_in_configured():
        return local_actor()
    found = membership()
    if found is None:
        raise RuntimeError("actor() called for a person the gate did not let in")  # pragma: no cover
    return Actor(_signed_in_email() or "", found.role, "signed in")


def workspace_folder() -> Path | None:
    """The signed-in person's team workspace (None: the server's default workspace)."""
    if not sign_in_configured():
        return None
    found = membership()
    if found is None:  # never the default workspace by accident: only a person the gate let in has a workspace
        raise RuntimeError("workspace_folder() called for a person the gate did not let in")
    return found.workspace


def refusal(action: str) -> str | None:
    """Why this person may not take ``action`` (a key of `evalcore.access.ACTIONS`), for a control's help; None when
    they may."""
    return actor().refusal(action)


def gate() -> None:
    """Before any page: without sign-in configured, nothing. With it, a sign-in screen for a visitor not signed in,
    an explanation (and sign-out) for a person on no list; for everyone let in, a line saying who they are, what
    they may do, and a sign-out button. A server whose secrets cannot be read, or that serves the network without
    sign-in (and without the operator's override), shows no page at all."""
    problem = misconfigured()
    if problem:
        st.error(problem, icon=":material/error:")
        st.stop()
    if not sign_in_configured():
        return
    try:
        config = roles()
    except EvalcoreError as exc:
        st.error(md_text(f"This server's sign-in is misconfigured: {exc}"), icon=":material/error:")
        st.stop()
    try:
        email = _signed_in_email()
        found = config.membership(email) if email else None
    except NotPermitted as exc:  # an ambiguous (look-alike) address, or one listed in two teams
        st.title("evalcore")
        st.warning(md_text(str(exc)), icon=":material/block:")
        if st.button("Sign out", key="access.sign_out"):
            st.logout()
        st.stop()
    if not st.user.get("is_logged_in"):
        st.title("evalcore")
        st.markdown("Sign in to see this team's evaluations. Your role (viewer, editor or owner) decides what you "
                    "may change; everything you change is recorded under your name.")
        for provider in providers():
            label = "Sign in" if provider is None else f"Sign in with {provider}"
            if st.button(label, key=f"access.sign_in.{provider or ''}", type="primary", icon=":material/login:"):
                st.login(provider)
        st.stop()
    if found is None:
        who = md_text(st.user.get("email") or "this account")
        why = ("its email address is not verified by the sign-in provider" if email is None
               else "this server lists nobody yet (its operator adds viewers, editors and owners to the [evalcore] "
                    "section of secrets.toml)" if config.empty
               else "it is on none of this server's lists of viewers, editors and owners")
        st.title("evalcore")
        st.warning(f"You are signed in as {who}, but {why}. Ask the server's owner to add you.",
                   icon=":material/block:")
        if st.button("Sign out", key="access.sign_out"):
            st.logout()
        st.stop()
    person = Actor(email, found.role, "signed in")
    cols = st.columns([6, 1], vertical_alignment="center")
    team = f" · team {found.team}" if found.team else ""
    cols[0].caption(md_text(f"Signed in as {person.summary()}{team}."),
                    help="\n\n".join(f"{words}: {role.label} or above" for role, words in
                                     sorted({(r, w) for r, w in ACTIONS.values()})))
    if cols[1].button("Sign out", key="access.sign_out", icon=":material/logout:"):
        st.logout()


def role_label() -> str:
    """``owner`` / ``editor`` / ``viewer`` of this session's person."""
    return actor().role.label


__all__ = ["Role", "actor", "gate", "membership", "refusal", "role_label", "roles", "sign_in_configured",
           "workspace_folder"]
