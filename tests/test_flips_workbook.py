"""The flips of the inputs a serving choice turns on (issue 40) in the workbook: where another
candidate overtakes the recommendation as a prefix hit rate moves, and where an owned fleet stops
paying as the electricity price moves, at the foot of the nominal sheet beside how far the decision
holds: today's value a link to the input, the flip points and costs capplan's flip search found (as
of the build), the margin a formula that LibreOffice and Gnumeric recalculate."""

from __future__ import annotations

import pytest
import recalc
import yaml
from openpyxl import load_workbook
from test_overtaking import _owned_plan
from test_prefix_cache import _rag

from capplan.analysis.pipeline import run
from capplan.language.model import standard_model
from capplan.rendering import view
from capplan.rendering.workbook import build_workbook, to_bytes

TITLE = "How far the recommendation holds"


def _built(folder, data: dict, name: str):
    """The plan's workbook (and its manifest) as ``capplan build`` makes it, written to ``folder``."""
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    analysed = run(path)
    shown = view.build(analysed.plan, analysed.evaluations, analysed.artifacts)
    book = build_workbook(analysed.plan, analysed.evaluations, standard_model(), shown)
    source = folder / f"{name}.xlsx"
    source.write_bytes(to_bytes(book))
    return book, source


def _block(ws) -> list[tuple]:
    """The rows of the block under :data:`TITLE` (the header first), as the cells' values."""
    top = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == TITLE)
    header = next(r for r in range(top, ws.max_row + 1) if ws.cell(r, 1).value == "Input")
    rows = []
    for r in range(header, ws.max_row + 1):
        if ws.cell(r, 1).value is None:
            break
        rows.append(tuple(ws.cell(r, c).value for c in range(1, 8)))
    return rows


@pytest.fixture(scope="module")
def rag(tmp_path_factory):
    return _built(tmp_path_factory.mktemp("flips-rag"), _rag(0.5), "rag")


def test_the_hit_rate_flips_are_on_the_nominal_sheet(rag):
    """test_overtaking's rag plan: above h = 0.5139 h100 TP2 on p5 ($87,840) and below 0.4314 h100 TP1
    ($117,120) cost less than the winner; each row says so, today's h a link to the class's cell."""
    book, source = rag
    ws = load_workbook(source)["nominal"]
    header, *rows = _block(ws)
    assert header[:4] == ("Input", "Today", "Flip at (found)", "Until (found)")
    up, down = sorted(rows, key=lambda r: -r[2])
    assert up[2] == pytest.approx(0.5139, abs=1e-4) and up[3] == pytest.approx(0.6684, abs=1e-4)
    assert up[4].startswith("For class rag's prefix hit rate from 0.5139 up to 0.6684 (today 0.5), "
                            "h100-sxm5-80gb TP2 on p5 costs less than h200-sxm-141gb TP1 on p5e")
    assert up[1].startswith("=") and up[5].startswith("=")              # today a link, the margin a formula
    assert up[6] == pytest.approx(87_840)
    assert down[2] == pytest.approx(0.4314, abs=1e-4) and down[6] == pytest.approx(117_120)


@pytest.fixture(scope="module")
def owned(tmp_path_factory):
    return _built(tmp_path_factory.mktemp("flips-owned"), _owned_plan("0.2 USD/kWh"), "owned")


@pytest.mark.parametrize("engine", recalc.engine_params())
def test_the_flips_recalculate(rag, owned, engine, tmp_path):
    out = engine.recalc([rag[1], owned[1]], tmp_path)
    for book, source in (rag, owned):
        wb = recalc.values(out[source])
        assert not recalc.error_cells(wb)
        assert not recalc.mismatches(book.cells, wb, limit=0, engine=engine)
    header, *rows = _block(recalc.values(out[rag[1]])["nominal"])
    assert sorted(round(r[5], 3) for r in rows) == [-0.137, 0.028]      # (0.4314 − 0.5) / 0.5, (0.5139 − 0.5) / 0.5
    assert all(r[1] == 0.5 and r[5] == pytest.approx((r[2] - 0.5) / 0.5, rel=1e-12) for r in rows)


def test_the_electricity_price_flip_is_on_the_nominal_sheet(owned):
    """test_overtaking's owned node: from $1.118/kWh the autoscaled fleet ($9,569.07) is the cheapest
    that holds; below today's $0.2/kWh no price changes the choice (no row). The autoscaled fleet's
    cost does not move with the price: the row links its cell."""
    book, source = owned
    (link,) = [c for c in book.cells if c.quantity == "deployments.autoscaled_monthly_cost" and c.role == "holds"]
    assert link.expected == pytest.approx(9569.07, abs=0.01)
    header, *rows = _block(load_workbook(source)["nominal"])
    (row,) = rows
    assert row[0] == "Price of electricity where the fleet runs (c_kWh)"
    assert row[2] == pytest.approx(1.118, abs=1e-3) and row[3] == pytest.approx(2.0)     # the search's end, ×10
    assert row[4] == ("From $1.118/kWh autoscaled on gpu is the cheapest that holds the SLO, $9,569.07 a month "
                      "against owned on gpu's $4,026.00")
    assert row[6].startswith("='nominal'!")                              # the strategy's own cell
