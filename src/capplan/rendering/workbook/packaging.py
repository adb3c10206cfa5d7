"""The .xlsx bytes: a zip whose bytes depend only on the workbook's content.

``capplan check`` compares ``out/`` byte for byte, so nothing may leak in from
the clock, the zip library, or the library versions that wrote the parts.
openpyxl writes the same content with different bytes depending on its
version (``docProps/app.xml`` names it) and on whether lxml is installed
(attribute order, quoting, empty elements, declarations), so every XML part
is parsed and written again here in one canonical form:

* an XML declaration (``.vml`` parts excepted: Excel writes none there);
* every namespace declared once, on the root, sorted by prefix, with
  conventional prefixes (``a:``, ``r:``, ``v:`` ...) rather than those the
  writer invented;
* attributes sorted by name; empty elements self-closed; no indentation
  (whitespace between elements is dropped, a leaf's text is kept as it is);
* text and attribute values escaped the same way whatever the source did.

``docProps/app.xml`` is capplan's own. Zip entries are sorted (content types
first), dated 1980-01-01, and stored by default: deflate output depends on
the zlib build.
"""

from __future__ import annotations

import datetime as dt
import io
import xml.etree.ElementTree as ET
import zipfile

from openpyxl import Workbook
from openpyxl.writer.excel import ExcelWriter

from capplan.rendering.workbook.template import config

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"
# Conventional prefixes, so a part's bytes do not depend on the prefixes its writer
# invented (lxml and ElementTree number them differently, ns0, ns1, ...).
PREFIXES = {
    "http://schemas.openxmlformats.org/drawingml/2006/main": "a",
    "http://schemas.openxmlformats.org/drawingml/2006/chart": "c",
    "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing": "xdr",
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships": "r",
    "http://schemas.openxmlformats.org/markup-compatibility/2006": "mc",
    "http://schemas.openxmlformats.org/package/2006/metadata/core-properties": "cp",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://purl.org/dc/terms/": "dcterms",
    "http://purl.org/dc/dcmitype/": "dcmitype",
    "http://www.w3.org/2001/XMLSchema-instance": "xsi",
    "urn:schemas-microsoft-com:vml": "v",
    "urn:schemas-microsoft-com:office:office": "o",
    "urn:schemas-microsoft-com:office:excel": "x",
}
# A root element in one of these namespaces declares it as the default one, as
# openpyxl writes them; other namespaces keep a prefix (cp:coreProperties).
DEFAULT_NAMESPACES = {
    "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "http://schemas.openxmlformats.org/drawingml/2006/chart",
    "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing",
    "http://schemas.openxmlformats.org/package/2006/relationships",
    "http://schemas.openxmlformats.org/package/2006/content-types",
    "http://schemas.openxmlformats.org/officeDocument/2006/extended-properties",
}
DECLARATION = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
APP_XML = ('<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
           '<Application>Microsoft Excel Compatible / capplan</Application></Properties>')
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                       "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def to_bytes(wb: Workbook) -> bytes:
    """Serialise deterministically: fixed document dates, canonical XML parts, a fixed zip layout."""
    stamp = config().get("timestamp") or dt.datetime(2000, 1, 1)
    if isinstance(stamp, str):
        stamp = dt.datetime.fromisoformat(stamp)
    if isinstance(stamp, dt.date) and not isinstance(stamp, dt.datetime):
        stamp = dt.datetime(stamp.year, stamp.month, stamp.day)
    wb.properties.created = stamp
    wb.properties.modified = stamp
    wb.properties.creator = "capplan"
    wb.properties.lastModifiedBy = "capplan"
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED) as archive:
        ExcelWriter(wb, archive).write_data()
    method = zipfile.ZIP_DEFLATED if config().get("zip_compression") == "deflate" else zipfile.ZIP_STORED
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", method) as dst:
        names = sorted(src.namelist(), key=lambda n: (n != "[Content_Types].xml", n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            info.create_system = 0
            data = APP_XML.encode() if name == "docProps/app.xml" else src.read(name)
            dst.writestr(info, canonical_xml(data, declaration=not name.endswith(".vml")))
    return out.getvalue()


def canonical_xml(data: bytes, declaration: bool = True) -> bytes:
    """One XML part in capplan's canonical form (see the module docstring)."""
    root = ET.fromstring(data)
    default = _namespace(root.tag) if _namespace(root.tag) in DEFAULT_NAMESPACES else None
    tag_uris, attribute_uris = set(), set()
    for e in root.iter():
        tag_uris.add(_namespace(e.tag))
        attribute_uris.update(_namespace(k) for k in e.attrib)
    unknown = iter(f"ns{i}" for i in range(len(tag_uris | attribute_uris)))
    prefix_of = {uri: PREFIXES.get(uri) or next(unknown)
                 for uri in sorted((tag_uris | attribute_uris) - {None, XML_NAMESPACE})}
    declared = {("" if uri == default else prefix_of[uri]): uri for uri in tag_uris - {None}}
    declared.update({prefix_of[uri]: uri for uri in attribute_uris - {None, XML_NAMESPACE}})
    prefix_of[XML_NAMESPACE] = "xml"
    tags: dict[str, str] = {}
    attributes: dict[str, str] = {}

    def qname(name: str, cache: dict, attribute: bool) -> str:
        if name not in cache:
            uri = _namespace(name)
            if uri is None:
                cache[name] = name
            else:
                prefix = "" if uri == default and not attribute else prefix_of[uri]
                local = name.split("}", 1)[1]
                cache[name] = f"{prefix}:{local}" if prefix else local
        return cache[name]

    out: list[str] = []
    write = out.append

    def element(e, head: str = "") -> None:
        tag = qname(e.tag, tags, False)
        write(f"<{tag}{head}")
        if e.attrib:
            for key, value in sorted((qname(k, attributes, True), v) for k, v in e.attrib.items()):
                write(f' {key}="{value.translate(_ATTR)}"')
        text = e.text if e.text and not (len(e) and e.text.isspace()) else None
        if len(e) or text:
            write(">")
            if text:
                write(text.translate(_TEXT))
            for child in e:
                element(child)
                if child.tail and not child.tail.isspace():
                    write(child.tail.translate(_TEXT))
            write(f"</{tag}>")
        else:
            write("/>")

    element(root, "".join(f' xmlns{":" + p if p else ""}="{u.translate(_ATTR)}"' for p, u in sorted(declared.items())))
    return (DECLARATION if declaration else b"") + "".join(out).encode("utf-8")


def _namespace(name: str) -> str | None:
    return name[1:].split("}", 1)[0] if name[0] == "{" else None
