"""Who may do what: the three roles, the actions each allows, the person acting, and the roles configuration.

Defined once here and enforced in `evalcore.workflows` (every action there takes an `Actor` and calls `require`
first), so a front end that hides a button is a courtesy, not the protection. The command line acts as the owner
of the files it is given (the person at the terminal can read and write them anyway), named by ``--who`` or the
login name (`local_actor`); the dashboard's server signs people in and looks their role up in the configuration
(`parse_access`): lists of email addresses or ``@domains`` per role, and for several teams on one server, one
workspace per team, so no team sees another's data.
"""

from __future__ import annotations

import getpass
import re
import string
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

from .errors import AccessConfigError, NotPermitted, UsageError
from .safe_text import has_control, one_line


class Role(IntEnum):
    """What a person may do; each role may do everything the roles below it may."""

    VIEWER = 1
    EDITOR = 2
    OWNER = 3

    @property
    def label(self) -> str:
        return self.name.lower()


ROLE_WORDS = {
    Role.VIEWER: "read every page and download",
    Role.EDITOR: "also upload files, save evaluations, edit the failure ledger, judge and build approximate indexes",
    Role.OWNER: "also reveal the holdout, delete and add label-set versions",
}
"""Each role in one line, for the page that says what the signed-in person may do."""

ACTIONS: dict[str, tuple[Role, str]] = {
    "upload": (Role.EDITOR, "upload files"),
    "save_evaluation": (Role.EDITOR, "save evaluations"),
    "edit_ledger": (Role.EDITOR, "edit the failure ledger"),
    "judge": (Role.EDITOR, "judge blind and flag labels for re-judging"),
    "build_index": (Role.EDITOR, "build approximate indexes on this server (each takes its memory)"),
    "reveal_holdout": (Role.OWNER, "reveal the holdout"),
    "delete": (Role.OWNER, "delete from the workspace"),
    "manage_label_versions": (Role.OWNER, "add label-set versions"),
}
"""Every action that changes the workspace or costs the server real memory (building an index): the least role that
may take it, and the action in plain words."""


@dataclass(frozen=True)
class Actor:
    """The person acting: ``who`` (an email address when signed in, else a login name or ``--who``), their role and
    how they were named (``how``: "signed in", "the login name", "--who")."""

    who: str
    role: Role
    how: str = "the login name"

    def may(self, action: str) -> bool:
        return self.role >= needed(action)

    def refusal(self, action: str) -> str | None:
        """Why this person may not take ``action``, in one sentence (None: they may)."""
        if self.may(action):
            return None
        role, words = ACTIONS[action]
        article = "an" if self.role.label[0] in "aeiou" else "a"
        return (f"{self.who} is {article} {self.role.label} here and may not {words}: that needs the {role.label} role. "
                "Ask the server's owner to change your role.")

    def summary(self) -> str:
        """``ana@example.com (editor): may read every page and download, ...``."""
        may = "; ".join(ROLE_WORDS[r] for r in Role if r <= self.role)
        return f"{self.who} ({self.role.label}): may {may}"


def needed(action: str) -> Role:
    """The least role that may take ``action`` (an unknown action is a programming error, refused loudly)."""
    try:
        return ACTIONS[action][0]
    except KeyError:
        raise ValueError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}") from None


def require(actor: Actor, action: str) -> None:
    """Raise `NotPermitted` (nothing done yet) unless ``actor`` may take ``action``."""
    if not isinstance(actor, Actor):
        raise NotPermitted(f"Refused to {ACTIONS[action][1] if action in ACTIONS else action}: no person is named "
                           "for it (every change records who made it).")
    reason = actor.refusal(action)
    if reason is not None:
        raise NotPermitted(reason)


def login_name() -> str:
    """The operating system's login name ("unknown" where there is none, as in some containers), its control
    characters escaped (`one_line`: it comes from LOGNAME or USER, which anyone can set)."""
    try:
        return one_line(getpass.getuser())
    except Exception:  # no login name: still record that someone acted
        return "unknown"


def local_actor(who: str | None = None) -> Actor:
    """The person at this machine (the command line, or a dashboard on 127.0.0.1 without sign-in): the owner of the
    workspace they can write anyway, named by the login name. A name given with ``--who`` (``who``) is a claim
    nobody checked, so it is recorded beside the login name: ``ana (--who; login lee)`` (just ``lee`` when it is the
    login name); one holding a control
    character is refused (`UsageError`): a newline would show a made-up line wherever the record is listed."""
    if who is not None and str(who).strip():
        claim = str(who).strip()
        if has_control(claim):
            raise UsageError(f"--who: expected a name without control characters (a newline, tab or escape would "
                             f"forge a line where the record is shown), got {ascii(claim)}.")
        login = login_name()
        if claim != login:
            return Actor(f"{claim} (--who; login {login})", Role.OWNER, "--who")
    return Actor(login_name(), Role.OWNER, "the login name")


# ----------------------------------------------------------------------------- email addresses

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


def ascii_folded(text: str) -> str:
    """``text`` with the ASCII letters A-Z lower-cased and nothing else changed: Unicode case folding would turn
    look-alikes into letters (KELVIN SIGN into ``k``), so other letters are compared exactly as written."""
    return text.translate(_ASCII_LOWER)


def address_problem(text: str) -> str | None:
    """Why ``text`` (an email address or ``@domain``) cannot name one person exactly, as the end of a sentence; None
    when it can. An address that Unicode normalisation (NFKC) changes is ambiguous: it looks like another address
    (``\u212aim@`` with a KELVIN SIGN looks like ``kim@``), so it names no one."""
    if _CONTROL_OR_SPACE.search(text):
        return "holds a space or a control character, which no address has"
    normal = unicodedata.normalize("NFKC", text)
    if normal != text:
        return (f"is ambiguous: Unicode normalisation (NFKC) turns it into {normal!r}, a different address that looks "
                "alike")
    return None


def signed_in_address(email: str) -> str:
    """The form a signed-in person's address is compared and recorded in (`ascii_folded`); `NotPermitted` when the
    address is ambiguous (`address_problem`), so a look-alike never takes another person's place."""
    text = str(email).strip()
    problem = address_problem(text)
    if problem is not None:
        raise NotPermitted(f"The email address {ascii(text)} {problem}, so it names no one here; sign in with an "
                           "address written in plain characters, or ask the server's owner.")
    return ascii_folded(text)


# ----------------------------------------------------------------------------- the roles configuration

SECTION = "evalcore"
"""The section of the dashboard's ``.streamlit/secrets.toml`` that holds the roles (beside Streamlit's ``[auth]``)."""

_ROLE_KEYS = {"viewers": Role.VIEWER, "editors": Role.EDITOR, "owners": Role.OWNER}


@dataclass(frozen=True)
class Team:
    """People and the workspace they share: ``rules`` are (email or ``@domain``, role); ``workspace`` None is the
    server's default workspace."""

    name: str
    workspace: Path | None
    rules: tuple[tuple[str, Role], ...]

    def role_of(self, email: str) -> Role | None:
        """The highest role any rule gives ``email`` (None: not in this team; `NotPermitted` when ambiguous)."""
        address = signed_in_address(email)
        domain = "@" + address.rsplit("@", 1)[1] if "@" in address else None
        roles = [role for entry, role in self.rules if entry == address or (domain is not None and entry == domain)]
        return max(roles) if roles else None


@dataclass(frozen=True)
class Membership:
    """A signed-in person's place: their team (``""``: the server's own lists), role and workspace folder."""

    team: str
    role: Role
    workspace: Path | None


@dataclass(frozen=True)
class AccessConfig:
    """Who may do what on a server, team by team. Empty (no one listed): nobody who signs in is let in."""

    teams: tuple[Team, ...] = ()

    @property
    def empty(self) -> bool:
        return not any(team.rules for team in self.teams)

    def with_default(self, folder: Path) -> "AccessConfig":
        """This configuration with the server's default workspace ``folder`` filled in for the lists that name none
        (`AccessConfigError` when a team's own folder is that one too: the teams would share their data)."""
        teams = tuple(Team(t.name, t.workspace or Path(folder), t.rules) for t in self.teams)
        named = [t for t in teams if t.rules]
        folders = [t.workspace for t in named]
        shared = next((f for f in folders if folders.count(f) > 1), None)
        if shared is not None:
            raise AccessConfigError(f"[{SECTION}]: two teams would use the workspace {shared} (the server's default "
                                    "is one of them); give each team its own.")
        return AccessConfig(teams)

    def membership(self, email: str) -> Membership | None:
        """Where ``email`` belongs (None: on no list). Listed in two teams: refused, since each person works in one
        team's workspace on a server. An ambiguous address (`address_problem`) is refused (`NotPermitted`)."""
        email = signed_in_address(email)
        found = [(team, role) for team in self.teams if (role := team.role_of(email)) is not None]
        if not found:
            return None
        if len(found) > 1:
            names = ", ".join(repr(t.name or "(the server's own lists)") for t, _ in found)
            raise NotPermitted(f"{email} is listed in more than one team ({names}); each person works in one team's "
                               "workspace here. Ask the server's owner to list you in one.")
        team, role = found[0]
        return Membership(team.name, role, team.workspace)


def parse_access(section: Mapping[str, Any] | None, source: str = f"[{SECTION}]") -> AccessConfig:
    """The roles configuration from its TOML section (a mapping; None or empty: nobody listed).

    Keys: ``viewers``, ``editors``, ``owners`` (lists of email addresses or ``@domain``), ``workspace`` (an
    absolute folder; default the server's workspace) and ``[teams.NAME]`` tables with the same keys, each team with a
    workspace of its own. A mistake raises `AccessConfigError` naming ``source``, the key and what was expected.
    """
    if not section:
        return AccessConfig()
    if not isinstance(section, Mapping):
        raise AccessConfigError(f"{source}: expected a table of roles, got {type(section).__name__}.")
    unknown = sorted(set(section) - set(_ROLE_KEYS) - {"workspace", "teams"})
    if unknown:
        raise AccessConfigError(f"{source}: unknown key {unknown[0]!r}; expected viewers, editors, owners, workspace "
                                "or teams.")
    teams = [_team("", section, source)]
    given = section.get("teams") or {}
    if not isinstance(given, Mapping):
        raise AccessConfigError(f"{source}.teams: expected tables [{SECTION}.teams.NAME], got {given!r}.")
    for name, body in given.items():
        where = f"{source}.teams.{name}"
        if not isinstance(body, Mapping):
            raise AccessConfigError(f"{where}: expected a table with viewers, editors, owners and workspace.")
        bad = sorted(set(body) - set(_ROLE_KEYS) - {"workspace"})
        if bad:
            raise AccessConfigError(f"{where}: unknown key {bad[0]!r}; expected viewers, editors, owners or "
                                    "workspace.")
        team = _team(str(name), body, where)
        if team.workspace is None:
            raise AccessConfigError(f"{where}: expected a workspace folder of its own (workspace = \"/srv/...\"): "
                                    "teams on one server never share one.")
        teams.append(team)
    folders = [t.workspace for t in teams if t.workspace is not None]
    shared = next((f for f in folders if folders.count(f) > 1), None)
    if shared is not None:
        raise AccessConfigError(f"{source}: two teams name the workspace {shared}; each team needs its own, or "
                                "they would see each other's data.")
    return AccessConfig(tuple(teams))


def _toml(data: bytes, source: str) -> dict:
    """The TOML file ``source`` (its bytes) parsed; `AccessConfigError` in one sentence when it is not UTF-8 text or
    not valid TOML."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = ("it starts with bytes FF FE or FE FF: saved as UTF-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff")
               else f"byte {exc.start + 1:,} is not UTF-8")
        raise AccessConfigError(f"{source}: not UTF-8 text ({why}); save it as UTF-8.") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AccessConfigError(f"{source}: not valid TOML ({exc}).") from None


# ----------------------------------------------------------------------------- the secrets file as a whole

AUTH_TEXT_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")
"""Keys of Streamlit's ``[auth]`` section (and of each ``[auth.PROVIDER]``) whose value must be text."""


def auth_problem(section: object, file: str | None = None) -> str | None:
    """What is wrongly typed in Streamlit's ``[auth]`` section (of ``file`` when named), in one sentence; None when
    nothing is, or there is no section.

    Streamlit itself fails with a traceback on these (``auth = "yes"`` stops the server as it starts). A value is
    never shown, only its kind: the section holds secrets."""
    where = f"{file} " if file else ""
    if section is None:
        return None
    if not isinstance(section, Mapping):
        return (f"{where}[auth]: expected a table (redirect_uri, cookie_secret and a provider's client_id, "
                f"client_secret and server_metadata_url), got {_kind(section)}.")
    for key, value in section.items():
        if key in AUTH_TEXT_KEYS and not isinstance(value, str):
            return f"{where}[auth].{key}: expected text in quotes, got {_kind(value)}."
        if isinstance(value, Mapping):
            for inner, setting in value.items():
                if inner in AUTH_TEXT_KEYS and not isinstance(setting, str):
                    return f"{where}[auth.{key}].{inner}: expected text in quotes, got {_kind(setting)}."
    return None


def secrets_problem(data: bytes, source: str) -> str | None:
    """Why the secrets file ``source`` (its bytes ``data``) cannot be used, in one sentence; None when it can: not
    UTF-8 text, not valid TOML, a wrongly typed ``[auth]`` (`auth_problem`) or ``[evalcore]`` (`parse_access`)."""
    try:
        parsed = _toml(data, source)
        parse_access(parsed.get(SECTION), f"{source} [{SECTION}]")
    except AccessConfigError as exc:
        return str(exc)
    return auth_problem(parsed.get("auth"), source)


def _kind(value: object) -> str:
    """What a TOML value is, in words (``a number``, ``a list``), without the value itself."""
    kinds = ((bool, "true or false"), (int, "a number"), (float, "a number"), (str, "text"), (list, "a list"),
             (Mapping, "a table"))
    return next((word for kind, word in kinds if isinstance(value, kind)), "a date or time")


def _team(name: str, body: Mapping[str, Any], where: str) -> Team:
    rules = []
    for key, role in _ROLE_KEYS.items():
        entries = body.get(key, [])
        if isinstance(entries, str):
            entries = [entries]
        if not isinstance(entries, (list, tuple)):
            raise AccessConfigError(f"{where}.{key}: expected a list of email addresses or @domains, got {entries!r}.")
        for entry in entries:
            if not isinstance(entry, str):
                raise AccessConfigError(f"{where}.{key}: expected each entry to be an email address or @domain in "
                                        f"quotes (\"ana@example.com\"), got {entry!r}.")
            text = ascii_folded(entry.strip())
            problem = None if _CONTROL_OR_SPACE.search(text) else address_problem(text)
            if problem is not None:
                raise AccessConfigError(f"{where}.{key}: the entry {ascii(entry.strip())} {problem}; write the "
                                        "address in plain characters.")
            local, at, domain = text.rpartition("@")
            if not at or not domain or "." not in domain or _CONTROL_OR_SPACE.search(text) or (local and "@" in local):
                raise AccessConfigError(f"{where}.{key}: expected an email address (ana@example.com) or a domain "
                                        f"(@example.com), got {entry!r}.")
            rules.append((text, role))
    folder = body.get("workspace")
    workspace = None
    if folder is not None:
        if not isinstance(folder, str) or not folder.strip():
            raise AccessConfigError(f"{where}.workspace: expected a folder path, got {folder!r}.")
        workspace = Path(folder.strip()).expanduser()
        if not workspace.is_absolute():
            raise AccessConfigError(f"{where}.workspace: expected an absolute folder path, got {folder!r}.")
    return Team(name, workspace, tuple(rules))
