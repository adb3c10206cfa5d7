"""The JSON document shares what scenarios have in common (rendering.jsonout._Shared): the
same object where the content is the same, never where it differs, and the same text."""

from __future__ import annotations

import json
import math
import random

from conftest import MAIN_PLAN

import capplan
from capplan import formatting
from capplan.rendering import jsonout
from capplan.rendering.jsonout import _plain_column
from plan_edits import full_view


def test_plain_column_is_plain_of_each_value():
    random.seed(7)
    special = [0.0, -0.0, 1.0, -3.0, 0.1, 1 / 3, 7.000000000000001, 999999999999.0, 1e12, 1e12 - 0.5, 1e15,
               2.0 ** 53, 123456.789, 1e-300, 5e-324, math.nan, math.inf, -math.inf]
    values = [random.choice(special) * random.choice([1, -1, 1.0000001, 10]) for _ in range(5000)]
    for column in (values, [True, False], ["a", "b"], [1.5, None, 2.0], []):
        assert [(type(v), v) for v in _plain_column(column)] == [(type(v), v) for v in map(formatting.plain, column)]


def test_scenarios_share_entries_whose_content_is_the_same():
    plan = capplan.load(MAIN_PLAN)
    doc = jsonout.document(full_view(plan, capplan.evaluate(plan)))
    nominal, surge = doc["scenarios"]["nominal"], doc["scenarios"]["surge_50"]
    same = nominal["quantities"]["kv_pool"]                  # no surge reaches the memory
    assert surge["quantities"]["kv_pool"] is same
    assert nominal["quantities"]["active_gpus"] is not surge["quantities"]["active_gpus"]
    assert nominal["quantities"]["active_gpus"]["value"] != surge["quantities"]["active_gpus"]["value"]
    assert surge["tables"]["load_sweep"]["rows"] is nominal["tables"]["load_sweep"]["rows"]
    assert surge["tables"]["classes"]["columns"] is doc["scenarios"]["n_minus_1"]["tables"]["classes"]["columns"]
    text = jsonout.dumps(doc)
    assert text == json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def test_scenarios_written_by_two_documents_join_into_the_one_text():
    """A build writes the scenarios each of its two processes searched, each with its own
    document (a forked child's copy), and writes the document around them: the text of the
    whole document, in UTF-8."""
    import pickle

    plan = capplan.load(MAIN_PLAN)
    shown = full_view(plan, capplan.evaluate(plan))
    whole = jsonout.dumps(jsonout.document(shown))
    front, back = jsonout.Document(shown), jsonout.Document(shown)
    names = [s.name for s in shown.scenarios]
    written = {names[0]: front.scenario_part(0), names[-1]: pickle.loads(pickle.dumps(back.scenario_part(len(names) - 1)))}
    assert front.encoded(written) == whole.encode("utf-8")
    assert jsonout.Document(shown).encoded({}) == whole.encode("utf-8")
