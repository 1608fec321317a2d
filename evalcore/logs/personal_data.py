"""Personal data in query text, masked before anything is kept, stored or shown.

Customers type their email address, phone number or card number into a search box. Every query text read from a
log passes `mask_texts` before it is counted, merged or sampled, so no such value reaches the output, a queries
file or a message; the number of logged queries masked is reported.

What is recognised (`mask_text`), each replaced by a marker:

* ``<email>``: ``name@domain.tld``;
* ``<card>``: 13 to 19 digits, spaces or dashes between them allowed, that pass the Luhn check (so an order number
  of 16 digits that fails it is left alone);
* ``<iban>``: an IBAN whose mod-97 check holds;
* ``<ssn>``: ``123-45-6789``;
* ``<ip>``: an IPv4 address;
* ``<phone>``: 7 to 15 digits written as a phone number: after ``+`` or ``00``, or with the usual separators
  (``555-0142``, ``(030) 1234 5678``), or 10 or more digits in a row; a date (``2024-01-15``) is not a phone.

Only texts that could hold one of these (an ``@``, or seven digits close together, or an IP address) are looked at
one by one (`CANDIDATE`, one vectorised match over all of them first). Presidio, when installed, is a stronger
recogniser (names, addresses, ...): `stronger_recogniser` returns it, and `evalcore.logs.sampling` runs it on what
is shown (an optional import: evalcore does not depend on it, and it needs a spaCy model that is installed, never
downloaded).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections import Counter
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

CANDIDATE = r"@|[0-9](?:[^0-9]{0,3}[0-9]){6}|[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+"
"""A text that may hold personal data (RE2, for `pyarrow.compute`): an ``@``, seven digits with at most three other
characters between neighbours, or an IPv4-like address. A superset of what `mask_text` masks."""

_EMAIL = re.compile(r"[\w.+%-]+@[\w-]+(?:\.[\w-]+)+", re.I)
_CARD = re.compile(r"(?<![\d])(?:\d[ -]?){12,18}\d(?![\d])")
_IBAN = re.compile(r"\b[a-z]{2}\d{2}(?:[ ]?[a-z0-9]){11,30}\b", re.I)
_SSN = re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])")
_IP = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])")
_PHONE = re.compile(r"(?<![\w+(])(?:\+|00)?\(?\d[\d ().-]{5,}\d(?![\w])")
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")

KINDS = ("email", "card", "iban", "ssn", "ip", "phone")


def luhn_ok(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (every card number does)."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_ok(text: str) -> bool:
    """Whether ``text`` (spaces allowed) is an IBAN whose mod-97 check holds."""
    compact = text.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _card(match: re.Match) -> str:
    digits = re.sub(r"\D", "", match.group())
    return "<card>" if 13 <= len(digits) <= 19 and luhn_ok(digits) else match.group()


def _iban(match: re.Match) -> str:
    return "<iban>" if iban_ok(match.group()) else match.group()


def _phone(match: re.Match) -> str:
    text = match.group()
    digits = re.sub(r"\D", "", text)
    if not 7 <= len(digits) <= 15 or _DATE.fullmatch(text.strip()):
        return text
    if text.startswith(("+", "00", "(")) or re.search(r"[ ().-]", text) or len(digits) >= 10:
        return "<phone>"
    return text


_STEPS: tuple[tuple[str, re.Pattern, Callable[[re.Match], str] | str], ...] = (
    ("email", _EMAIL, "<email>"), ("card", _CARD, _card), ("iban", _IBAN, _iban), ("ssn", _SSN, "<ssn>"),
    ("ip", _IP, "<ip>"), ("phone", _PHONE, _phone))


def mask_text(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with every email, card, IBAN, SSN, IP address and phone number replaced by its marker, and the kinds
    masked (empty when nothing was)."""
    kinds = []
    for kind, pattern, replace in _STEPS:
        masked = pattern.sub(replace, text)
        if masked != text:
            kinds.append(kind)
            text = masked
    return text, tuple(kinds)


def mask_texts(texts: pa.Array) -> tuple[pa.Array, np.ndarray, list[tuple[str, ...]]]:
    """Every text of ``texts`` masked (`mask_text`): the masked array, which rows changed, and the kinds masked in
    each changed row (in row order). Only the rows `CANDIDATE` matches are looked at one by one."""
    texts = pc.cast(texts, pa.large_string()) if texts.type != pa.large_string() else texts
    maybe = pc.fill_null(pc.match_substring_regex(texts, CANDIDATE), False).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(maybe)
    changed = np.zeros(len(texts), dtype=bool)
    if not len(rows):
        return texts, changed, []
    found = [mask_text(t) for t in texts.take(pa.array(rows)).to_pylist()]
    hit = np.array([bool(kinds) for _, kinds in found], dtype=bool)
    changed[rows[hit]] = True
    values = texts.to_numpy(zero_copy_only=False).astype(object) if hit.any() else None
    if values is None:
        return texts, changed, []
    for row, (masked, _) in zip(rows[hit], (f for f, h in zip(found, hit) if h)):
        values[row] = masked
    return pa.array(values, pa.large_string()), changed, [kinds for _, kinds in found if kinds]


def kind_counts(kinds: list[tuple[str, ...]], weights: np.ndarray) -> dict[str, int]:
    """How many logged queries (``weights``: each masked text's count) had each kind masked."""
    counts: Counter = Counter()
    for found, weight in zip(kinds, weights):
        for kind in found:
            counts[kind] += int(weight)
    return {kind: counts[kind] for kind in KINDS if counts[kind]}


# ----------------------------------------------------------------------------- Presidio, when installed


def stronger_recogniser() -> Callable[[str], tuple[str, tuple[str, ...]]] | None:
    """Presidio's analyzer as a masker (text -> masked text, kinds), when ``presidio_analyzer`` and a spaCy English
    model are installed; None otherwise (the patterns above still apply). Never downloads anything."""
    if importlib.util.find_spec("presidio_analyzer") is None:
        return None
    model = next((m for m in ("en_core_web_lg", "en_core_web_md", "en_core_web_sm")
                  if importlib.util.find_spec(m) is not None), None)
    if model is None:
        return None
    presidio = importlib.import_module("presidio_analyzer")  # slow optional import (spaCy): only when installed
    provider = importlib.import_module("presidio_analyzer.nlp_engine").NlpEngineProvider(nlp_configuration={
        "nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": model}]})
    analyzer = presidio.AnalyzerEngine(nlp_engine=provider.create_engine(), supported_languages=["en"])
    return lambda text: presidio_mask(analyzer, text)


def presidio_mask(analyzer, text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with what Presidio's ``analyzer`` finds replaced by ``<entity type>``, the kinds found."""
    found = sorted(analyzer.analyze(text=text, language="en"), key=lambda r: r.start)
    out, at, kinds = [], 0, []
    for result in found:
        if result.start < at:
            continue
        kind = str(result.entity_type).lower()
        out += [text[at:result.start], f"<{kind}>"]
        at = result.end
        kinds.append(kind)
    out.append(text[at:])
    return "".join(out), tuple(dict.fromkeys(kinds))
