"""Text out: spreadsheet-formula neutralising, Markdown escaping of user text, and plain and Markdown tables.

Every layer that renders a result as text uses these, so user text is made inert in one place. Standard library
only (pandas frames are passed in, never imported): `evalcore.access` uses it, and scripts/serving_check.py loads
that before the virtual environment exists."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # type hints only: this module runs without pandas
    import pandas as pd

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Every character that moves the cursor, starts a line or reorders what is shown: C0 and C1 controls (newline and
tab too), the Unicode line and paragraph separators, and the bidirectional overrides and isolates."""
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]<>()#+\-.!|~$&]|:|(?<=:material)/")
"""What Markdown (CommonMark, GFM, Streamlit's) may read as markup; `md_text` writes it backslash-escaped, which every
one of them shows as the character itself. ``$`` opens LaTeX in Streamlit. A colon is escaped only where it opens or
closes an emoji shortcode (``:smile:``, ``:+1:``) or opens a Streamlit icon (``:material/home:``, whose ``/`` is
escaped too: Streamlit rewrites ``:material/`` before parsing) or a Streamlit directive (``:red[...]``, ``:small``,
``:help``: Streamlit draws them even without the brackets); ``labels:tune`` or ``Saved: ...`` keep theirs."""


def safe_cell(value: object) -> object:
    """A CSV cell that a spreadsheet will not run: text starting with = + - @ gets a leading '.

    Numbers pass through unchanged (a negative number is data, not a formula).
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def unsafe_cell(value: object) -> object:
    """A cell `safe_cell` wrote back to its text (its leading ' before = + - @ removed): files evalcore wrote and
    reads again."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1] in "=+-@\t\r":
        return value[1:]
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell (and column name) passed through `safe_cell`."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype.kind not in "biufc":  # numbers (and true/false) are data, never formulas
            out[column] = out[column].map(safe_cell)
    out.columns = [safe_cell(str(c)) for c in out.columns]
    return out


def to_csv(frame: pd.DataFrame) -> str:
    """CSV text with formula-safe cells and full-precision numbers."""
    return safe_frame(frame).to_csv(index=False, lineterminator="\n")


def terminal_safe(text: str) -> str:
    """Text that a terminal shows as written: control characters (an ESC colour or clipboard sequence, a carriage
    return that overwrites the line) appear escaped as ``\\xNN``, the line separators and the bidirectional
    overrides and isolates (which reorder what is shown) as ``\\uNNNN``; newlines and tabs are kept."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character that could forge or hide text where it is shown (`_ANY_CONTROL`): a name
    recorded with a change must not (a newline in ``--who`` would show a second, made-up line in the record)."""
    return _ANY_CONTROL.search(text) is not None


def one_line(text: str) -> str:
    """``text`` on one line, shown as written: every character `has_control` finds escaped (``\\n``, ``\\t``,
    ``\\x1b``, ``\\u202e``), so a table cell is one line and a record shows no line it does not hold."""
    def escaped(match: re.Match) -> str:
        char = match.group()
        return _SHORT_ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
    return _ANY_CONTROL.sub(escaped, text)


def md_text(value: object) -> str:
    """User text made inert inside Markdown, shown as written: newlines flattened, markup characters escaped
    (`_MARKDOWN_SPECIAL`: no emphasis, link, HTML, LaTeX, emoji shortcode or icon), and bare web and mail addresses
    (``www.example.com``, ``http://...``, ``name@example.com``) kept from becoming links. GFM finds those in the text
    after escapes are resolved (``www\\.example\\.com`` is still linked), so an invisible word joiner (U+2060) goes
    where the link would start: after ``www``, after ``http``/``https``, before the ``@`` of an address whose domain
    has a dot and ends in a letter (``recall@10`` is left alone). The characters shown are the same; no renderer
    sees a link."""
    text = str(value).replace("\r", " ").replace("\n", " ")
    text = re.sub(r"(?i)(?<=www)(?=\.)|(?<=http)(?=:)|(?<=https)(?=:)", "\u2060", text)
    text = re.sub(r"(?<=[-.\w+])@(?=[-\w]+(?:\.[-\w]+)*\.[-\w]*[^\W\d_](?![-.\w]*\w))", "\u2060@", text)
    # Streamlit rewrites these after escapes are resolved: its logo and icon shortcodes, and typographic pairs
    # (-> <- -- >= <= ~= would show as arrows, dashes and signs). A word joiner keeps each pair apart.
    text = re.sub(r"(?i)(?<=:)(?=streamlit:|material_)|(?<=-)(?=[->])|(?<=<)(?=[-=])|(?<=[>~])(?==)", "\u2060", text)
    colons = {m.start() for m in re.finditer(r":(?=material/|(?:(?:red|orange|yellow|blue|green|violet|gray|grey|"
                                             r"primary|rainbow)(?:-background|-badge)?|small|shimmer|help|color)"
                                             r"(?![\w-]))", text)}
    for m in re.finditer(r"(?=(:[\w+-]+:))", text):  # every shortcode-shaped span, overlapping ones too
        colons.update((m.start(1), m.end(1) - 1))
    return _MARKDOWN_SPECIAL.sub(lambda m: m.group() if m.group() == ":" and m.start() not in colons
                                 else "\\" + m.group(), text)


def text_table(header: list[str], body: list[list[str]], *, right: set[int] = frozenset(),
               title: str | None = None) -> str:
    """A plain-text table: columns padded to width, those in ``right`` right-aligned, each cell on one line
    (`one_line`: a newline in a name or note never starts a row of its own)."""
    header = [one_line(h) for h in header]
    body = [[one_line(c) for c in row] for row in body]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines = ([title] if title else []) + [fmt(header), fmt(["-" * w for w in widths])]
    return "\n".join(lines + [fmt(r) for r in body])


def md_table(title: str, header: list[str], body: list[list[str]]) -> str:
    """A Markdown table under a ``###`` title, every cell escaped (`md_text`)."""
    lines = [f"### {md_text(title)}", "", "| " + " | ".join(md_text(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def marked_pieces(text: str, ranges: Iterable[tuple[int, int]], limit: int | None = None) -> list[tuple[str, bool]]:
    """``text`` cut into pieces at the (start, end) character ``ranges`` it holds (evidence, say): ``(piece, marked)``
    in order, overlapping ranges merged, ranges clipped to the text, runs of whitespace shown as one space. With
    ``limit``, at most about that many characters, cut after a word and ending in "…".

    The pieces are still user text: a renderer escapes each (`md_text`) and marks the marked ones with markup of its
    own, so no range can open or close markup."""
    size = len(text)
    spans = sorted((max(0, int(a)), min(size, int(b))) for a, b in ranges if min(size, int(b)) > max(0, int(a)))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    cuts, at = [], 0
    for start, end in merged:
        if start > at:
            cuts.append((text[at:start], False))
        cuts.append((text[start:end], True))
        at = end
    if at < size:
        cuts.append((text[at:], False))
    pieces, used = [], 0
    for index, (piece, marked) in enumerate(cuts):
        flat = re.sub(r"\s+", " ", piece)
        if index == 0:
            flat = flat.lstrip()
        if limit is not None and used + len(flat) > limit:
            room = flat[:max(0, limit - used) + 1]
            kept = room.rsplit(" ", 1)[0] if " " in room else room[:max(0, limit - used)]
            if kept.strip():
                pieces.append((kept.rstrip(" ,.;:-"), marked))
            pieces.append(("…", False))
            return pieces
        used += len(flat)
        pieces.append((flat, marked))
    if pieces:
        pieces[-1] = (pieces[-1][0].rstrip(), pieces[-1][1])
    return [p for p in pieces if p[0]]
