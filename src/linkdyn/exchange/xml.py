"""Safe XML reading for the model importers: a small element tree with each element's line.

Files are parsed by :mod:`defusedxml` (no external entities, no entity expansion, no DTD
retrieval: a "billion laughs" file is refused, not expanded), through SAX so that every
element keeps the line it starts on, which the importers' errors name. Nothing here knows
a format; :class:`Node` is what they read.
"""

from __future__ import annotations

import math
import os
import xml.sax
import xml.sax.handler
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelFileError

__all__ = ["Node", "parse_file"]

#: The largest model file read (bytes): a robot description is kilobytes to a few
#: megabytes; a larger file is refused before it is read.
MAX_BYTES = 64 * 2**20


@dataclass
class Node:
    """An XML element: its tag, attributes, children (elements only), text and line."""
    tag: str
    attrib: dict
    line: int
    children: list = field(default_factory=list)
    text: str = ""
    path: str = ""

    def find(self, tag: str):
        """The first child with ``tag``, or None."""
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag: str) -> list:
        return [c for c in self.children if c.tag == tag]

    def where(self, attribute: str | None = None) -> str:
        """``line N, <tag name="...">[, attribute 'a']``: for an error's location."""
        name = self.attrib.get("name")
        element = f"<{self.tag}" + (f' name="{name}"' if name is not None else "") + ">"
        return f"line {self.line}, {element}" + (f", attribute {attribute!r}"
                                                 if attribute else "")

    def error(self, message: str, attribute: str | None = None) -> ModelFileError:
        return ModelFileError(message, path=self.path, field=self.where(attribute) + ":")

    def required(self, attribute: str) -> str:
        if attribute not in self.attrib:
            raise self.error(f"the attribute {attribute!r} is missing", attribute)
        return self.attrib[attribute]

    def child(self, tag: str) -> "Node":
        """The required child ``tag``."""
        node = self.find(tag)
        if node is None:
            raise self.error(f"the element <{tag}> is missing")
        return node

    def choice(self, attribute: str, allowed, what: str) -> str:
        """The required attribute, one of ``allowed`` (a ``what`` such as "joint type")."""
        value = self.required(attribute)
        if value not in allowed:
            raise self.error(f"{what} {value!r} is not one of {', '.join(allowed)}", attribute)
        return value

    def reference(self, attribute: str, table, what: str) -> str:
        """The required attribute, which must name an entry of ``table`` (a ``what``)."""
        value = self.required(attribute)
        if value not in table:
            raise self.error(f"no {what} named {value!r} in the file", attribute)
        return value

    def floats(self, attribute: str, count: int, default=None) -> np.ndarray:
        """``count`` finite numbers from a space-separated attribute (``default`` when the
        attribute is absent and a default is given)."""
        if attribute not in self.attrib:
            if default is None:
                raise self.error(f"the attribute {attribute!r} is missing", attribute)
            return np.array(default, dtype=float)
        text = self.attrib[attribute]
        try:
            values = [float(x) for x in text.split()]
        except ValueError:
            raise self.error(f"expected {count} numbers, got {text!r}", attribute) from None
        if len(values) != count or not all(math.isfinite(x) for x in values):
            raise self.error(f"expected {count} finite numbers, got {text!r}", attribute)
        return np.array(values)

    def number(self, attribute: str, default=None) -> float:
        return float(self.floats(attribute, 1, None if default is None else [default])[0])


class _Builder(xml.sax.handler.ContentHandler):
    def __init__(self, path):
        super().__init__()
        self.path = path
        self.stack: list[Node] = []
        self.root: Node | None = None
        self.locator = None

    def setDocumentLocator(self, locator):
        self.locator = locator

    def startElement(self, name, attrs):
        line = self.locator.getLineNumber() if self.locator is not None else 0
        node = Node(name, dict(attrs.items()), line, path=self.path)
        if self.stack:
            self.stack[-1].children.append(node)
        else:
            self.root = node
        self.stack.append(node)

    def endElement(self, name):
        node = self.stack.pop()
        node.text = node.text.strip()

    def characters(self, content):
        if self.stack:
            self.stack[-1].text += content


def parse_file(path: str) -> Node:
    """The root element of the XML file ``path``. ModelFileError for a file that is not a
    regular file, too large, not well-formed (naming the line) or that declares entities."""
    import defusedxml
    import defusedxml.sax

    if not os.path.exists(path):
        raise ModelFileError("no such file", path=path)
    if not os.path.isfile(path):
        raise ModelFileError("not a regular file (a directory or a device)", path=path)
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise ModelFileError(f"the file has {size} bytes, more than a model file may have "
                             f"({MAX_BYTES})", path=path)
    handler = _Builder(path)
    try:
        with open(path, "rb") as f:
            defusedxml.sax.parse(f, handler, forbid_dtd=False, forbid_entities=True,
                                 forbid_external=True)
    except xml.sax.SAXParseException as exc:
        raise ModelFileError(f"line {exc.getLineNumber()}, column {exc.getColumnNumber()}: "
                             f"not well-formed XML ({exc.getMessage()})", path=path) from None
    except defusedxml.DefusedXmlException as exc:
        raise ModelFileError(f"the file declares entities or external references, which "
                             f"are not read ({exc})", path=path) from None
    except OSError as exc:
        raise ModelFileError(f"cannot be read: {exc.strerror or exc}", path=path) from None
    if handler.root is None:
        raise ModelFileError("no XML element in the file", path=path)
    return handler.root
