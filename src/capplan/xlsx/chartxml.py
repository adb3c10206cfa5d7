"""Chart parts (DrawingML ``c:chartSpace``): scatter charts (the load sweep's,
the simulation's distributions) and the tornado's bar chart, written as text from what they plot.

Series read cell ranges (``'nominal'!$A$126:$A$132``), so a chart follows
edited cells; the spreadsheet draws it, the file stores no plotted number.
"""

from __future__ import annotations

from dataclasses import dataclass

from .xmlescape import text

CHART_NS = "http://schemas.openxmlformats.org/drawingml/2006/chart"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"


@dataclass(frozen=True)
class Line:
    """A scatter series: y against x, a line in one colour (dashed: ``dash``), markers or none."""

    title: str
    x: str
    y: str
    color: str
    width_emu: int
    dash: str = "solid"
    marker_size: int | None = None      # None: no markers


def _title(value: str) -> str:
    return (f"<title><tx><rich><a:bodyPr/><a:p><a:pPr><a:defRPr/></a:pPr><a:r><a:t>{text(value)}</a:t></a:r>"
            f"</a:p></rich></tx><overlay val=\"0\"/></title>")


def _solid(color: str) -> str:
    return f'<a:solidFill><a:srgbClr val="{color}"/></a:solidFill>'


def _line(i: int, s: Line) -> str:
    if s.marker_size is None:
        marker = '<marker><symbol val="none"/></marker>'
    else:
        marker = (f'<marker><symbol val="circle"/><size val="{s.marker_size}"/><spPr>{_solid(s.color)}'
                  f"<a:ln>{_solid(s.color)}</a:ln></spPr></marker>")
    return (f'<ser><idx val="{i}"/><order val="{i}"/><tx><v>{text(s.title)}</v></tx>'
            f'<spPr><a:ln w="{s.width_emu}">{_solid(s.color)}<a:prstDash val="{s.dash}"/></a:ln></spPr>{marker}'
            f"<xVal><numRef><f>{text(s.x)}</f></numRef></xVal><yVal><numRef><f>{text(s.y)}</f></numRef></yVal>"
            '<smooth val="0"/></ser>')


def _axis(tag: str, ax: int, cross: int, position: str, title: str | None = None, *, deleted=False,
          gridlines=False, extra: str = "", tail: str = "", after: str = "", orientation: str = "minMax",
          bounds: tuple[float, float] | None = None) -> str:
    fixed = f'<max val="{bounds[1]:g}"/><min val="{bounds[0]:g}"/>' if bounds else ""
    return (f'<{tag}><axId val="{ax}"/><scaling><orientation val="{orientation}"/>{fixed}</scaling>'
            f'<delete val="{1 if deleted else 0}"/><axPos val="{position}"/>'
            + ("<majorGridlines/>" if gridlines else "") + (_title(title) if title else "") + extra
            + f'<majorTickMark val="none"/><minorTickMark val="none"/>{tail}<crossAx val="{cross}"/>{after}</{tag}>')


def _space(plot: str, legend: str | None, style: int | None = None) -> str:
    key = f'<legend><legendPos val="{legend}"/><overlay val="0"/></legend>' if legend else ""
    return (f'<chartSpace xmlns="{CHART_NS}" xmlns:a="{A_NS}">' + (f'<style val="{style}"/>' if style else "")
            + f'<chart>{plot}{key}<plotVisOnly val="1"/><dispBlanksAs val="gap"/></chart></chartSpace>')


def scatter(title: str, x_title: str, left: tuple[str, list[Line]], right: tuple[str, list[Line]] | None,
            legend: str | None, style: int, y_format: str | None = None,
            y_range: tuple[float, float] | None = None) -> str:
    """Lines against one x axis: ``left`` (axis title, series) on the left value
    axis, ``right`` (if any) on a second value axis at the right edge; the left
    axis in ``y_format`` where given (``0%``) and fixed to ``y_range`` where given (a share: 0 to 1),
    no legend where ``legend`` is None."""
    first = "".join(_line(i, s) for i, s in enumerate(left[1]))
    y_extra = f'<numFmt formatCode="{text(y_format)}" sourceLinked="0"/>' if y_format else ""
    plot = (f"{_title(title)}<autoTitleDeleted val=\"0\"/><plotArea>"
            f'<scatterChart><scatterStyle val="lineMarker"/><varyColors val="0"/>{first}'
            '<axId val="10"/><axId val="20"/></scatterChart>')
    if right:
        second = "".join(_line(len(left[1]) + i, s) for i, s in enumerate(right[1]))
        plot += (f'<scatterChart><scatterStyle val="lineMarker"/><varyColors val="0"/>{second}'
                 '<axId val="300"/><axId val="200"/></scatterChart>')
    plot += (_axis("valAx", 10, 20, "b", x_title)
             + _axis("valAx", 20, 10, "l", left[0], gridlines=not right, extra=y_extra, bounds=y_range))
    if right:
        plot += (_axis("valAx", 300, 200, "b", deleted=True)
                 + _axis("valAx", 200, 300, "r", right[0], gridlines=True, after='<crosses val="max"/>'))
    return _space(plot + "</plotArea>", legend, style)


def tornado(title: str, value_title: str, number_format: str, names: str,
            bars: list[tuple[str, str, str]]) -> str:
    """Horizontal bars around zero, overlapping: one bar series per (title cell, values,
    colour), categories ``names`` listed top to bottom."""
    series = "".join(f'<ser><idx val="{i}"/><order val="{i}"/><tx><strRef><f>{text(head)}</f></strRef></tx>'
                     f"<spPr>{_solid(color)}</spPr>"
                     f'<invertIfNegative val="0"/><cat><strRef><f>{text(names)}</f></strRef></cat>'
                     f"<val><numRef><f>{text(values)}</f></numRef></val></ser>"
                     for i, (head, values, color) in enumerate(bars))
    plot = (f"{_title(title)}<autoTitleDeleted val=\"0\"/><plotArea>"
            f'<barChart><barDir val="bar"/><grouping val="clustered"/><varyColors val="0"/>{series}'
            '<gapWidth val="40"/><overlap val="100"/><axId val="10"/><axId val="100"/></barChart>'
            + _axis("catAx", 10, 100, "l", orientation="maxMin", tail='<tickLblPos val="low"/>')
            + _axis("valAx", 100, 10, "b", value_title, gridlines=True,
                    extra=f'<numFmt formatCode="{text(number_format)}" sourceLinked="0"/>')
            + "</plotArea>")
    return _space(plot, "r")
