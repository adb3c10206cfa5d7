"""``scenarios:``: each a copy of the nominal plan with what its ``set:``
changes (a quantity, or a table cell ``table[row].column``), its own
``expect:``, and an imported sweep's goodput recounted at its SLOs."""

from __future__ import annotations

from capplan import names
from capplan.loading.plan import expect, imports, inputs as plan_inputs, values
from capplan.loading.plan.context import Context, kind, show
from capplan.loading.plan.data import NOMINAL, Scenario, TableData
from capplan.names import nearest

SCENARIO_KEYS = ("title", "description", "set", "expect")


# Each scenario is a sheet of the workbook: 999 and the nominal plan make a 125 MiB workbook,
# within an output's budget (capplan.build.MAX_OUTPUT_BYTES).
MAX_SCENARIOS = 999


def read_all(ctx: Context, nominal: Scenario) -> list[Scenario]:
    raw = ctx.data.get("scenarios") or {}
    if not isinstance(raw, dict):
        raise ctx.err("expected a mapping of scenario names", "scenarios")
    if len(raw) > MAX_SCENARIOS:
        raise ctx.err(f"{len(raw):,} scenarios, more than the {MAX_SCENARIOS:,} a plan may have (docs/limits.md): "
                      "each is a sheet of the workbook and a part of the JSON; split the plan", "scenarios")
    out = []
    for name, spec in raw.items():
        path = ("scenarios", name)
        ctx.text(name, "scenarios", field="scenario name")         # refuses one too long to show
        if name == NOMINAL:
            raise ctx.err("'nominal' is the plan itself; name the scenario otherwise", *path)
        spec = spec or {}
        if not isinstance(spec, dict):
            raise ctx.err("a scenario is a mapping (title:, set:, expect:), got "
                          f"{kind(spec)}", *path)
        for key in spec:
            if key not in SCENARIO_KEYS:
                raise ctx.err(f"unknown key '{key}'{nearest(str(key), SCENARIO_KEYS)}", *path, key)
        inputs = dict(nominal.inputs)
        tables = {k: TableData(v.name, [dict(r) for r in v.rows], v.meta, v.source, v.as_of, v.note, v.lines,
                               uncertain=dict(v.uncertain))
                  for k, v in nominal.tables.items()}
        changes, set_goodput = [], set()
        changed = spec.get("set") or {}
        if not isinstance(changed, dict):
            raise ctx.err(f"'set:' is a mapping of quantity: value, got {kind(changed)}", *path, "set")
        for target, value in changed.items():
            tpath = path + ("set", target)
            cell = names.cell(target)
            if cell:
                _set_cell(ctx, tables, cell, value, tpath)
                if cell[2] == "goodput_share":
                    set_goodput.add(cell[0])
            else:
                inputs[target] = plan_inputs.read(ctx, str(target), value, tpath, origin=str(name))
            changes.append(f"{target} = {value['value'] if isinstance(value, dict) else value}")
        if not changes:
            raise ctx.err("a scenario needs 'set:' with at least one change", *path)
        imports.recount_goodput(ctx, nominal, inputs, tables, set_goodput)
        out.append(Scenario(str(name), ctx.text(spec.get("title"), *path, "title") or str(name),
                            (ctx.text(spec.get("description"), *path, "description") or "").strip(),
                            inputs, tables, expect.read(ctx, spec.get("expect") or {}, path + ("expect",)), changes))
    return out


def _set_cell(ctx: Context, tables, cell, value, path) -> None:
    tname, key, col = cell
    if tname not in tables:
        raise ctx.err(f"unknown table '{tname}'{nearest(tname, tables)}", *path)
    table = ctx.model.tables[tname]
    q = ctx.model.quantities.get(f"{tname}.{col}")
    if q is None or not q.is_input or q.kind == "text":
        raise ctx.err(f"'{col}' is not an input column of {tname}", *path)
    index = tables[tname].key_index(ctx.model.quantities[f"{tname}.{table.key}"].column, key)
    if index is None:
        keys = [show(r[table.key]) for r in tables[tname].rows]
        raise ctx.err(f"{tname} has no row '{key}'{nearest(key, keys)}", *path)
    tables[tname].rows[index][col], dist = values.cell(ctx, value, q, q.unit, path)
    tables[tname].uncertain.pop((index, col), None)
    if dist is not None:
        tables[tname].uncertain[(index, col)] = dist
