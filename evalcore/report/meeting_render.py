"""A page of sections rendered as Markdown or as one self-contained HTML file, with user text escaped.

A page is a list of ``(title, blocks)`` sections; a block is ``("p", parts)``, ``("lead", parts)`` (a sentence to read
first, in larger type), ``("list", items)``
(each item a list of parts), ``("table", header, rows)`` or ``("image", name, alt)``. Every part
that is not `Safe` is user text (run and model names, query text, notes, tags) and is escaped:
with `evalcore.safe_text.md_text` in Markdown, with `html.escape` in HTML. Text evalcore writes
itself (numbers, metric names) is marked `Safe` and shown as is in Markdown.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence

from ..safe_text import md_text

Section = tuple[str, list]
"""One section of a page: its title (evalcore's own words) and its blocks."""

CHART_SCALE = 2
"""Charts are drawn at twice their size and shown at their natural size: sharp on hi-dpi screens."""


class Safe(str):
    """Text evalcore wrote itself (numbers, metric names): shown as is in Markdown. Everything else is
    user text and is escaped."""


def labels_ref(provenance: dict) -> str:
    """The label set as the page names it: ``name vN #fingerprint``."""
    labels = provenance["labels"]
    version = f" v{labels['version']}" if labels.get("version") is not None else ""
    return f"{labels['name']}{version} #{labels['fingerprint']}"


def _md(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value) if isinstance(value, Safe) else md_text(value)


def _h(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


def render_markdown(title: str, sections: Sequence[Section], notes: Sequence[str], images: Mapping[str, str]) -> str:
    """Markdown of the page; ``images`` maps chart names to the image paths or URLs to link (others are left out)."""
    lines = [f"# {md_text(title)}", ""]
    for heading, blocks in sections:
        lines += [f"## {heading}", ""]  # section titles are evalcore's own words
        for block in blocks:
            kind = block[0]
            if kind == "p":
                lines += ["".join(_md(p) for p in block[1]), ""]
            elif kind == "lead":
                lines += ["**" + "".join(_md(p) for p in block[1]) + "**", ""]
            elif kind == "list":
                lines += ["- " + "".join(_md(p) for p in item) for item in block[1]] + [""]
            elif kind == "table":
                header, rows = block[1], block[2]
                lines.append("| " + " | ".join(_md(h) for h in header) + " |")
                lines.append("|" + "|".join("---" for _ in header) + "|")
                lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
                lines.append("")
            elif kind == "image" and block[1] in images:
                lines += [f"![{md_text(block[2])}]({images[block[1]]})", ""]
    for note in notes:
        lines += [md_text(note), ""]
    return "\n".join(lines).rstrip() + "\n"


CSS = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#1d1d1f;font-size:14px;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f5f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
.context{color:#555}.lead{font-size:1.25em;line-height:1.4;margin:.5em 0}img{max-width:100%;margin:.5em 0}ul{margin:.3em 0}
@media print{body{margin:0;font-size:11px}h2{page-break-after:avoid}}
"""


def render_html(title: str, sections: Sequence[Section], notes: Sequence[str], pngs: Mapping[str, bytes]) -> str:
    """One self-contained HTML page; charts named in ``pngs`` embedded as PNG data URIs (others are left out)."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_h(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_h(title)}</h1>"]
    for heading, blocks in sections:
        parts.append(f"<h2>{_h(heading)}</h2>")
        for block in blocks:
            kind = block[0]
            if kind == "p":
                parts.append('<p class="context">' + "".join(_h(p) for p in block[1]) + "</p>")
            elif kind == "lead":
                parts.append('<p class="lead">' + "".join(_h(p) for p in block[1]) + "</p>")
            elif kind == "list":
                parts.append("<ul>" + "".join("<li>" + "".join(_h(p) for p in item) + "</li>"
                                              for item in block[1]) + "</ul>")
            elif kind == "table":
                header, rows = block[1], block[2]
                parts.append("<table><thead><tr>" + "".join(f"<th>{_h(h)}</th>" for h in header) + "</tr></thead><tbody>")
                for row in rows:
                    parts.append("<tr>" + "".join(
                        f'<td class="num">{_h(c)}</td>' if isinstance(c, Safe) and _numeric(c) else f"<td>{_h(c)}</td>"
                        for c in row) + "</tr>")
                parts.append("</tbody></table>")
            elif kind == "image" and block[1] in pngs:
                png = pngs[block[1]]
                width = int.from_bytes(png[16:20], "big") // CHART_SCALE  # natural size, sharp on hi-dpi screens
                data = base64.b64encode(png).decode("ascii")
                parts.append(f'<img alt="{_h(block[2])}" width="{width}" src="data:image/png;base64,{data}">')
    for note in notes:
        parts.append(f'<p class="context">{_h(note)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] == "-")
