"""The .xlsx bytes: a zip whose bytes depend only on the workbook's content.

A build that is checked byte for byte lets nothing leak in from the clock,
the zip library, or a library's version. Every part is written
here as text (:mod:`.sheetxml`, :mod:`.stylesxml`, :mod:`.chartxml` and the
small parts below): one spelling, attributes in a fixed order, no
indentation. Zip entries are sorted (content types first), dated
1980-01-01, and stored by default: deflate output depends on the zlib build.
The document's dates and authors are the caller's (:class:`Properties`).
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from dataclasses import dataclass
from functools import lru_cache

from .sheetmodel import Sheet, column_letter, quote_sheet
from .sheetxml import R_NS, CellXml, sheet_xml
from .stylesxml import MAIN_NS, StyleSheet
from .xmlescape import DECLARATION, attr, text

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
CT = "application/vnd.openxmlformats-officedocument."
CORE_REL = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
XDR_NS = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
EMU_PER_CM = 360000


def _rels(targets: list[tuple[str, str, str]]) -> str:
    """(id, type, target) relationships."""
    body = "".join(f'<Relationship Id="{i}" Type="{t if t.startswith("http") else REL + t}" Target="{attr(target)}"/>'
                   for i, t, target in targets)
    return f'<Relationships xmlns="{PKG_RELS}">{body}</Relationships>'


@dataclass(frozen=True)
class Properties:
    """What the file says of itself: its author (also every comment's), the application
    named as its maker, and the one date it was created and modified (a fixed date by
    default: the clock would change the bytes)."""

    creator: str = "xlsx"
    application: str = "Microsoft Excel Compatible"
    stamp: dt.datetime = dt.datetime(2000, 1, 1)

    def core(self) -> str:
        when = self.stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        who = text(self.creator)
        return ('<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
                'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
                f'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>{who}</dc:creator>'
                f'<cp:lastModifiedBy>{who}</cp:lastModifiedBy>'
                f'<dcterms:created xsi:type="dcterms:W3CDTF">{when}</dcterms:created>'
                f'<dcterms:modified xsi:type="dcterms:W3CDTF">{when}</dcterms:modified></cp:coreProperties>')

    def app(self) -> str:
        return ('<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
                f'<Application>{text(self.application)}</Application></Properties>')


def _comments(cells: list, author: str) -> tuple[str, str]:
    """The comments part of a sheet's cells that carry one (:meth:`.sheetmodel.Sheet.comments`)
    and its VML drawing (where Excel keeps each comment's box)."""
    listed = "".join(f'<comment ref="{c.coordinate}" authorId="0"><text><t>{text(c.comment.text)}</t></text></comment>'
                     for c in cells)
    part = (f'<comments xmlns="{MAIN_NS}"><authors><author>{text(author)}</author></authors>'
            f"<commentList>{listed}</commentList></comments>")
    shapes = "".join(
        f'<v:shape id="_x0000_s{1026 + i}" type="#_x0000_t202" fillcolor="#ffffe1" o:insetmode="auto" '
        f'style="position:absolute;margin-left:59.25pt;margin-top:1.5pt;width:{c.comment.width_px}px;'
        f'height:{c.comment.height_px}px;z-index:1;visibility:hidden"><v:fill color2="#ffffe1"/>'
        '<v:shadow color="black" obscured="t"/><v:path o:connecttype="none"/>'
        '<v:textbox style="mso-direction-alt:auto"><div style="text-align:left"/></v:textbox>'
        '<x:ClientData ObjectType="Note"><x:MoveWithCells/><x:SizeWithCells/><x:AutoFill>False</x:AutoFill>'
        f"<x:Row>{c.row - 1}</x:Row><x:Column>{c.column - 1}</x:Column></x:ClientData></v:shape>"
        for i, c in enumerate(cells))
    vml = ('<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" '
           'xmlns:x="urn:schemas-microsoft-com:office:excel"><o:shapelayout v:ext="edit">'
           '<o:idmap v:ext="edit" data="1"/></o:shapelayout><v:shapetype id="_x0000_t202" coordsize="21600,21600" '
           'o:spt="202" path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/>'
           '<v:path gradientshapeok="t" o:connecttype="rect"/></v:shapetype>' + shapes + "</xml>")
    return part, vml


def _drawing(sheet: Sheet, first_chart: int) -> tuple[str, str]:
    """The drawing that places a sheet's charts, and its relationships to the chart parts."""
    anchors, rels = [], []
    for i, chart in enumerate(sheet.charts, start=1):
        rels.append((f"rId{i}", "chart", f"/xl/charts/chart{first_chart + i - 1}.xml"))
        anchors.append(
            f'<xdr:oneCellAnchor><xdr:from><xdr:col>{chart.column}</xdr:col><xdr:colOff>0</xdr:colOff>'
            f'<xdr:row>{chart.row}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>'
            f'<xdr:ext cx="{round(chart.width_cm * EMU_PER_CM)}" cy="{round(chart.height_cm * EMU_PER_CM)}"/>'
            f'<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="{i + 1}" name="Chart {i}"/>'
            '<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr><xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/>'
            '</xdr:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart">'
            f'<c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rId{i}"/>'
            '</a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:oneCellAnchor>')
    part = (f'<xdr:wsDr xmlns:xdr="{XDR_NS}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
            f'xmlns:r="{R_NS}">{"".join(anchors)}</xdr:wsDr>')
    return part, _rels(rels)


def _workbook(sheets: list[Sheet]) -> str:
    listed = "".join(f'<sheet name="{attr(s.title)}" sheetId="{i}" r:id="rId{i}"/>' for i, s in enumerate(sheets, 1))
    names = []
    for i, s in enumerate(sheets):
        qs, spans = quote_sheet(s.title), []
        if s.page.title_columns:
            first, last = s.page.title_columns
            spans.append(f"{qs}!${column_letter(first)}:${column_letter(last)}")
        if s.page.title_rows:
            first, last = s.page.title_rows
            spans.append(f"{qs}!${first}:${last}")
        if s.page.area:
            first, last = s.page.area.split(":")
            names.append(f'<definedName name="_xlnm.Print_Area" localSheetId="{i}">'
                         f'{text(f"{qs}!{_absolute(first)}:{_absolute(last)}")}</definedName>')
        if spans:
            names.append(f'<definedName name="_xlnm.Print_Titles" localSheetId="{i}">{text(",".join(spans))}'
                         "</definedName>")
        sheet_id = f'" localSheetId="{i}">'
        names.extend(f"{_name_tag(n)}{sheet_id}{text(target)}</definedName>" for n, target in s.names.items())
    defined = f"<definedNames>{''.join(names)}</definedNames>" if names else ""
    return (f'<workbook xmlns="{MAIN_NS}" xmlns:r="{R_NS}"><workbookPr/><bookViews><workbookView activeTab="0"/>'
            f'</bookViews><sheets>{listed}</sheets>{defined}<calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>')


def _absolute(cell: str) -> str:
    """'I40' -> '$I$40'."""
    letters = cell.rstrip("0123456789")
    return f"${letters}${cell[len(letters):]}"


@lru_cache(maxsize=None)
def _name_tag(name: str) -> str:
    """A defined name's element up to its sheet (sheets alike define the same names)."""
    return f'<definedName name="{attr(name)}'


def parts(sheets: list[Sheet], properties: Properties = Properties(), release: bool = False) -> dict[str, str]:
    """Every part of the package, by name. ``release``: each sheet's cells are dropped
    once its part is spelled (the workbook is being written for the last time), so a
    workbook of many sheets is not held twice, as cells and as XML."""
    styles = StyleSheet()
    cells = CellXml(styles)
    out: dict[str, str] = {}
    overrides = [("/xl/workbook.xml", "spreadsheetml.sheet.main+xml"), ("/xl/styles.xml", "spreadsheetml.styles+xml"),
                 ("/docProps/core.xml", None), ("/docProps/app.xml", "extended-properties+xml")]
    charts = drawings = notes = 0
    for i, s in enumerate(sheets, start=1):
        rels = []
        drawing = comments = None
        if s.charts:
            drawings += 1
            drawing = "rId1"
            out[f"xl/drawings/drawing{drawings}.xml"], out[f"xl/drawings/_rels/drawing{drawings}.xml.rels"] = \
                _drawing(s, charts + 1)
            rels.append((drawing, "drawing", f"/xl/drawings/drawing{drawings}.xml"))
            overrides.append((f"/xl/drawings/drawing{drawings}.xml", "drawing+xml"))
            for chart in s.charts:
                charts += 1
                out[f"xl/charts/chart{charts}.xml"] = chart.xml
                overrides.append((f"/xl/charts/chart{charts}.xml", "drawingml.chart+xml"))
        commented = s.comments()
        if commented:
            notes += 1
            comments = "rId2"
            out[f"xl/comments/comment{notes}.xml"], out[f"xl/drawings/commentsDrawing{notes}.vml"] = \
                _comments(commented, properties.creator)
            rels.append((comments, "vmlDrawing", f"/xl/drawings/commentsDrawing{notes}.vml"))
            rels.append(("rId3", "comments", f"/xl/comments/comment{notes}.xml"))
            overrides.append((f"/xl/comments/comment{notes}.xml", "spreadsheetml.comments+xml"))
        out[f"xl/worksheets/sheet{i}.xml"] = sheet_xml(s, cells, i == 1, drawing, comments)
        if release:
            s.release()
        overrides.append((f"/xl/worksheets/sheet{i}.xml", "spreadsheetml.worksheet+xml"))
        if rels:
            out[f"xl/worksheets/_rels/sheet{i}.xml.rels"] = _rels(rels)
    out["xl/styles.xml"] = styles.xml()
    out["xl/workbook.xml"] = _workbook(sheets)
    out["xl/_rels/workbook.xml.rels"] = _rels(
        [(f"rId{i}", "worksheet", f"/xl/worksheets/sheet{i}.xml") for i in range(1, len(sheets) + 1)]
        + [(f"rId{len(sheets) + 1}", "styles", "styles.xml")])
    out["_rels/.rels"] = _rels([("rId1", "officeDocument", "xl/workbook.xml"),
                                ("rId2", CORE_REL, "docProps/core.xml"),
                                ("rId3", "extended-properties", "docProps/app.xml")])
    out["docProps/core.xml"] = properties.core()
    out["docProps/app.xml"] = properties.app()
    types = "".join(f'<Override PartName="{name}" ContentType="'
                    f'{"application/vnd.openxmlformats-package.core-properties+xml" if kind is None else CT + kind}"/>'
                    for name, kind in overrides)
    out["[Content_Types].xml"] = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Default Extension="vml" ContentType="{CT}vmlDrawing"/>{types}</Types>')
    return out


def to_bytes(sheets: list[Sheet], properties: Properties = Properties(), *, deflate: bool = False,
             release: bool = False) -> bytes:
    """The sheets as an .xlsx, deterministically: canonical parts in a fixed zip layout,
    stored (``deflate``: compressed, the bytes then depend on the zlib build). ``release``
    (the sheets' last use): each sheet's cells are dropped as its part is spelled, and each
    part once it is in the zip."""
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    out = io.BytesIO()
    written = parts(sheets, properties, release)
    with zipfile.ZipFile(out, "w", method) as dst:
        for name in sorted(written, key=lambda n: (n != "[Content_Types].xml", n)):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            info.create_system = 0
            body = written.pop(name)
            dst.writestr(info, (body if name.endswith(".vml") else DECLARATION + body).encode("utf-8"))
    return out.getvalue()
