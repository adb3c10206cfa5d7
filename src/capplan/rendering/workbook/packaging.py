"""The .xlsx bytes: a zip whose bytes depend only on the workbook's content.

``capplan check`` compares ``out/`` byte for byte, so nothing may leak in
from the clock, the zip library or the order openpyxl happens to write.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from openpyxl import Workbook
from openpyxl.writer.excel import ExcelWriter

from capplan.rendering.workbook.template import config

ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def to_bytes(wb: Workbook) -> bytes:
    """Serialise deterministically: fixed document dates, fixed zip entry dates, sorted entries."""
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
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).write_data()
    # Stored, not deflated, by default: deflate output depends on the zlib build
    # (zlib vs zlib-ng), and `capplan check` compares out/ byte for byte.
    method = zipfile.ZIP_DEFLATED if config().get("zip_compression") == "deflate" else zipfile.ZIP_STORED
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", method) as dst:
        names = sorted(src.namelist(), key=lambda n: (n != "[Content_Types].xml", n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            info.create_system = 0
            dst.writestr(info, src.read(name))
    return out.getvalue()
