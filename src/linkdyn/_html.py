"""Small HTML summaries for Jupyter (``_repr_html_`` of models and results): a titled table
of name-value rows, every value escaped."""

from __future__ import annotations

from html import escape

__all__ = ["table", "names"]


def table(title: str, rows) -> str:
    """An HTML table headed by ``title`` with one (name, value) row per entry."""
    body = "".join(f"<tr><th style='text-align:left'>{escape(str(k))}</th>"
                   f"<td style='text-align:left'>{escape(str(v))}</td></tr>" for k, v in rows)
    return f"<table><caption style='text-align:left'><b>{escape(title)}</b></caption>" \
           f"{body}</table>"


def names(items, most: int = 12) -> str:
    """'3: a, b, c', or the first ``most`` of many and how many more."""
    items = list(items)
    if not items:
        return "none"
    shown = ", ".join(items[:most])
    more = f", ... ({len(items) - most} more)" if len(items) > most else ""
    return f"{len(items)}: {shown}{more}"
