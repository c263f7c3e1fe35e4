"""Small HTML summaries for Jupyter (``_repr_html_`` of models and results): a titled table
of name-value rows, every value escaped."""

from __future__ import annotations

import base64
from html import escape

__all__ = ["table", "names"]


def table(title: str, rows, png: bytes | None = None) -> str:
    """An HTML table headed by ``title`` with one (name, value) row per entry, beside a PNG
    drawing when one is given."""
    body = "".join(f"<tr><th style='text-align:left'>{escape(str(k))}</th>"
                   f"<td style='text-align:left'>{escape(str(v))}</td></tr>" for k, v in rows)
    summary = f"<table><caption style='text-align:left'><b>{escape(title)}</b></caption>" \
              f"{body}</table>"
    if not png:
        return summary
    image = base64.b64encode(png).decode("ascii")
    return (f"<div style='display:flex;gap:1em;align-items:flex-start'>{summary}"
            f"<img src='data:image/png;base64,{image}' alt='{escape(title)}'/></div>")


def names(items, most: int = 12) -> str:
    """'3: a, b, c', or the first ``most`` of many and how many more."""
    items = list(items)
    if not items:
        return "none"
    shown = ", ".join(items[:most])
    more = f", ... ({len(items) - most} more)" if len(items) > most else ""
    return f"{len(items)}: {shown}{more}"
