"""A page of sections rendered as Markdown or as one self-contained HTML file, with user text escaped.

A page is its answers, a list of ``(title, blocks)`` sections, then an appendix of more sections under `APPENDIX`
(printed, the HTML starts it on a new page: the answers are one A4 page, the appendix what a reader can skip). A block
is ``("p", parts)``, ``("lead", parts)`` (a sentence to read first, in larger type), ``("list", items)`` (each item a
list of parts), ``("table", header, rows)`` or ``("image", name, alt)``. Every part that is not `Safe` is user text
(run and model names, query text, notes, tags) and is escaped: with `evalcore.safe_text.md_text` in Markdown, with
`html.escape` in HTML. Text evalcore writes itself (numbers, metric names) is marked `Safe` and shown as is in
Markdown."""

from __future__ import annotations

import base64
import html
import math
import struct
import zlib
from collections.abc import Mapping, Sequence

from ..safe_text import md_text, one_line

Section = tuple[str, list]
"""One section of a page: its title (evalcore's own words) and its blocks."""

CHART_SCALE = 1.5
"""Charts are drawn at one and a half times their size and shown at their natural size: sharp on paper and on hi-dpi
screens, and the page stays small (the sample's report with charts: about 110 KB; `compact_png`)."""

APPENDIX = "Appendix: details"
"""The heading of what follows the answers: the details a meeting can skip."""

APPENDIX_NOTE = ("What backs the answers above: the paired comparisons, the cost of k, the charts, the longer tables, "
                 "the history and where every number came from. A meeting can skip it.")


class Safe(str):
    """Text evalcore wrote itself (numbers, metric names): shown as is in Markdown. Everything else is
    user text and is escaped."""


def labels_ref(provenance: dict) -> str:
    """The label set as the page names it: ``name vN #fingerprint``."""
    labels = provenance["labels"]
    version = f" v{labels['version']}" if labels.get("version") is not None else ""
    return f"{labels['name']}{version} #{labels['fingerprint']}"


def _md(value: object) -> str:
    """User text for the Markdown page: inert as Markdown, and every control character (ESC, BEL, a line separator, a
    bidi override) shown escaped as written (`one_line`), never passed raw to a terminal or an editor."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value) if isinstance(value, Safe) else md_text(one_line(str(value)))


def _h(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


def render_markdown(title: str, sections: Sequence[Section], notes: Sequence[str], images: Mapping[str, str],
                    appendix: Sequence[Section] = ()) -> str:
    """Markdown of the page: the ``sections`` (``##``), then the ``appendix`` under `APPENDIX` (its sections ``###``);
    ``images`` maps chart names to the image paths or URLs to link (others are left out)."""
    lines = [f"# {md_text(title)}", ""]
    for heading, blocks in sections:
        lines += _md_section("##", heading, blocks, images)
    if appendix:
        lines += [f"## {APPENDIX}", "", APPENDIX_NOTE, ""]
        for heading, blocks in appendix:
            lines += _md_section("###", heading, blocks, images)
    for note in notes:
        lines += [md_text(note), ""]
    return "\n".join(lines).rstrip() + "\n"


def _md_section(level: str, heading: str, blocks: list, images: Mapping[str, str]) -> list[str]:
    lines = [f"{level} {heading}", ""]  # section titles are evalcore's own words
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
    return lines


CSS = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#1d1d1f;font-size:14px;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin-top:1.3em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f5f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums;
white-space:nowrap}
.context{color:#555}.lead{font-size:1.25em;line-height:1.4;margin:.5em 0}img{max-width:100%;margin:.5em 0}ul{margin:.3em 0}
.appendix{break-before:page;margin-top:3em;border-top:3px double #bbb}.appendix>h2{border-bottom:none}
@page{size:A4;margin:12mm}
@media print{body{margin:0;max-width:none;padding:0;font-size:10px;line-height:1.3}
h1{font-size:1.7em;margin:0 0 .3em}h2{font-size:1.3em;margin:1em 0 .3em;break-after:avoid}
h3{break-after:avoid}.lead{font-size:1.2em;margin:.3em 0}table{font-size:9px;margin:.4em 0}th,td{padding:1px 3px}
tr,img,li{break-inside:avoid}.appendix{margin-top:0;border-top:none}}
"""


def render_html(title: str, sections: Sequence[Section], notes: Sequence[str], pngs: Mapping[str, bytes],
                appendix: Sequence[Section] = ()) -> str:
    """One self-contained HTML page: the ``sections``, then the ``appendix`` under `APPENDIX` on a page of its own
    when printed; charts named in ``pngs`` embedded as PNG data URIs (`MeetingReport.chart_pngs`: recompressed; others
    are left out)."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_h(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_h(title)}</h1>"]
    for heading, blocks in sections:
        parts += _html_section("h2", heading, blocks, pngs)
    if appendix:
        parts += ['<section class="appendix">', f"<h2>{_h(APPENDIX)}</h2>",
                  f'<p class="context">{_h(APPENDIX_NOTE)}</p>']
        for heading, blocks in appendix:
            parts += _html_section("h3", heading, blocks, pngs)
        parts.append("</section>")
    for note in notes:
        parts.append(f'<p class="context">{_h(note)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_section(tag: str, heading: str, blocks: list, pngs: Mapping[str, bytes]) -> list[str]:
    parts = [f"<{tag}>{_h(heading)}</{tag}>"]
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
            png = pngs[block[1]]  # recompressed by `MeetingReport.chart_pngs`
            width = round(int.from_bytes(png[16:20], "big") / CHART_SCALE)  # shown at natural size
            data = base64.b64encode(png).decode("ascii")
            parts.append(f'<img alt="{_h(block[2])}" width="{width}" src="data:image/png;base64,{data}">')
    return parts


def compact_png(png: bytes) -> bytes:
    """The same image with its pixel data compressed again at zlib's best level (vl-convert writes it fast, at about
    four times the size); every other chunk kept as it is. Anything not a readable PNG is returned unchanged."""
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        return png
    before, data, after, at = [], [], [], 8
    while at + 12 <= len(png):
        size, kind = struct.unpack(">I4s", png[at:at + 8])
        chunk = png[at:at + 12 + size]
        if kind == b"IDAT":
            data.append(png[at + 8:at + 8 + size])
        else:
            (after if data else before).append(chunk)
        at += 12 + size
    try:
        pixels = zlib.compress(zlib.decompress(b"".join(data)), 9)
    except zlib.error:
        return png
    idat = struct.pack(">I", len(pixels)) + b"IDAT" + pixels + struct.pack(">I", zlib.crc32(b"IDAT" + pixels))
    out = png[:8] + b"".join(before) + idat + b"".join(after)
    return out if len(out) < len(png) else png


def _numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] == "-")
