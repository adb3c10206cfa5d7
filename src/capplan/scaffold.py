"""``capplan init``: a first plan that builds at once, in a folder that may be a fresh repository.

The plan is ``templates/plan.yaml.j2`` filled in from the catalog: Little's-law
sizing (no sweep needed yet), the SLOs stated (none has a default), the model's
default policies written out with their sources, and every pending measurement
marked ``status: pending`` with a TODO comment, so ``capplan check`` lists what is
left to measure. The decode throughput it starts from is the bandwidth bound of
the chosen GPU and model, marked as such. The plan is built once before init
says it is done; one that would not build (a model too large for the replica) is
refused and not left behind. An existing plan is never overwritten.

``.gitattributes`` gets the lines that make GitHub fold the generated outputs
(``linguist-generated``) and treat the workbook as binary, so a pull request
shows the plan and the diff comment first.

init writes only inside the project, as a plan's imports read only inside it
(its git repository, else FOLDER): a ``plans/``, plan file or ``.gitattributes``
that is a symlink leading out is refused, and so is a ``.gitattributes`` that is
no regular file (a FIFO would block the read for ever). Everything is checked
before anything is written, and a failure after the plan was written removes it
again: init leaves a plan that builds, or nothing.
"""

from __future__ import annotations

import errno
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import jinja2

from capplan import bounded
from capplan.errors import CapplanError, UsageError
from capplan.loading import catalog, parallel
from capplan.resources import templates_dir

TEMPLATE = "plan.yaml.j2"
GITATTRIBUTES = ("out/** linguist-generated=true", "out/*.xlsx binary")
GITATTRIBUTES_NOTE = "# capplan: generated outputs fold in pull requests; the workbook is binary"
GITATTRIBUTES_BYTES = 2 ** 20    # a .gitattributes is a few hundred bytes; a larger one is refused
DEFAULT_GPU, DEFAULT_MODEL, DEFAULT_PEAK = "h100-sxm5-80gb", "llama-3.1-8b", "10 req/s"
PLACEHOLDER_GPU_PRICE = "3.00 USD/h"
WRITTEN_TAGS = ("policy", "assumption")    # defaults written out; facts come from the catalog


@dataclass(frozen=True)
class Written:
    plan: Path
    gitattributes: str          # 'written', 'extended' or 'current'


def init(folder: Path, *, gpu: str | None, model: str | None, tp: int, peak: str | None, name: str | None,
         today: str) -> Written:
    """Write ``folder/plans/<name>.yaml`` (refusing an existing one) and ``.gitattributes``; build the plan once."""
    gpu_entry = catalog.lookup("gpu", gpu or DEFAULT_GPU)
    model_entry = catalog.lookup("model", model or DEFAULT_MODEL)
    if why := parallel.refusal(model_entry, tp):
        raise CapplanError(f"--tp {tp}: {why}")
    folder, stem = Path(folder), name or f"{model_entry.id}-{gpu_entry.id}"
    target, attributes = _places(folder, stem)
    current = _read_attributes(attributes)
    text = render(gpu_entry, model_entry, gpu_written=gpu or DEFAULT_GPU, model_written=model or DEFAULT_MODEL,
                  tp=tp, peak=_with_unit(peak or DEFAULT_PEAK, "req/s"), name=stem, today=today)
    made = _write_new(target, text, named=name is not None)
    try:
        _builds(target)
    except CapplanError as err:
        _undo(target, made)
        hint = "; give more GPUs per replica (--tp) or a larger --gpu" if "does not fit" in err.message else ""
        raise CapplanError(f"the plan for {model_entry.id} on {gpu_entry.id} would not build, so none was "
                           f"written: {err.message}{hint}") from None
    try:
        return Written(target, _gitattributes(attributes, current))
    except OSError as err:
        _undo(target, made)
        raise _refused(attributes, err, named=False) from None


def _places(folder: Path, name: str) -> tuple[Path, Path]:
    """The plan's path and ``.gitattributes``', each refused when it leads outside the project
    (through a symlink, as an import would be) or is not what init may write."""
    there = next((p for p in (folder, *folder.parents) if os.path.lexists(p)), folder)
    if os.path.lexists(there) and not there.is_dir():
        under = "" if there == folder else f" ({there} is no folder)"
        raise UsageError(f"FOLDER {folder} is not a folder{under}: give the project folder, in which init "
                         "writes plans/<name>.yaml")
    plans = folder / "plans"
    target = plans / f"{name}.yaml"
    attributes = folder / ".gitattributes"
    found = bounded.repository(folder)
    root = found or Path(os.path.realpath(folder))
    for path in (plans, target, attributes):
        leaving = bounded.leaving(path, root)
        if leaving:
            where = "the project's repository" if found else f"the folder {root} (it is in no git repository)"
            raise CapplanError(f"{path} is {leaving} outside {where}; capplan init writes only inside it, "
                               "so it does not follow the link")
    if os.path.lexists(plans) and not plans.is_dir():
        raise CapplanError(f"{plans} is not a folder: capplan init writes its plan in {plans}/")
    if os.path.lexists(target):
        raise CapplanError(f"{target} exists; capplan init never overwrites a plan (edit it, or give --name)")
    return target, attributes


def _write_new(target: Path, text: str, *, named: bool) -> bool:
    """Write the plan as a new file (exclusively: never over a file, nor through a link, that
    appeared since :func:`_places` looked); whether this made ``plans/``, which :func:`_undo` removes."""
    made, created = not os.path.lexists(target.parent), False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as handle:
            created = True
            handle.write(text)
    except OSError as err:
        _undo(target, made, written=created)
        raise _refused(target, err, named=named) from None
    return made


def _undo(target: Path, made: bool, *, written: bool = True) -> None:
    """Remove the plan init wrote, and ``plans/`` if init made it (best effort: the error that
    led here is the one to report)."""
    try:
        if written:
            target.unlink()
        if made:
            os.rmdir(target.parent)
    except OSError:
        pass


def _refused(path: Path, err: OSError, *, named: bool) -> CapplanError:
    """A file system's refusal of init's write as one message naming the file: a name longer than
    the file system takes is the ``--name`` argument's fault (exit 2), anything else the folder's (exit 1)."""
    if err.errno == errno.ENAMETOOLONG and named:
        return UsageError(f"--name: a plan file name of {len(os.fsencode(path.name))} bytes is longer than the "
                          f"file system takes ({err.strerror}); give a shorter --name")
    return CapplanError(f"cannot write {path}: {err.strerror or err}")


def render(gpu: catalog.Entry, model: catalog.Entry, *, gpu_written: str, model_written: str, tp: int, peak: str,
           name: str, today: str) -> str:
    from capplan.language.model import standard_model

    standard = standard_model()
    quantities = standard.quantities
    provided = set(gpu.values) | set(model.values)        # the catalog's say is never overridden
    defaults = [quantities[n] for n in standard.active(standard.default_switches() | {"sizing": "littles_law"})
                if quantities[n].is_input and quantities[n].table is None and quantities[n].default is not None
                and n not in provided and n != "gpus_per_replica"]
    rows = [{"name": q.name, "value": _with_unit(q.default, q.unit), "tag": q.tag, "description": q.description,
             "source": q.source or "capplan standard model"} for q in defaults]
    estimate, why = _decode_estimate(gpu, model, tp, quantities)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["q"] = lambda value: json.dumps(str(value), ensure_ascii=False)
    return env.get_template(TEMPLATE).render(
        title=f"{model.name} on {gpu.name}", name=name, today=today, gpu=gpu, model=model, gpu_written=gpu_written,
        model_written=model_written, tp=tp, peak=peak, decode_throughput=estimate, decode_source=why,
        pending=[r for q, r in zip(defaults, rows) if q.status == "pending"],
        policies=[r for q, r in zip(defaults, rows) if q.status != "pending" and q.tag in WRITTEN_TAGS],
        gpu_price=PLACEHOLDER_GPU_PRICE, node_price=f"{tp * float(PLACEHOLDER_GPU_PRICE.split()[0]):.2f} USD/h")


def _with_unit(default, unit: str) -> str:
    """A default as a plan writes it: ``1.75 GiB``, not a bare ``1.75`` a reader must look up."""
    text = str(default)
    return f"{text} {unit}" if unit and not any(c.isalpha() for c in text) else text


def _decode_estimate(gpu: catalog.Entry, model: catalog.Entry, tp: int, quantities) -> tuple[str, str]:
    """A starting decode throughput: the batch the bandwidth bound assumes, over the time one step
    takes to read the weights at the default share of peak bandwidth (KV reads left out, so high)."""
    from capplan.language import units

    def value(entry, name):
        spec = entry.values.get(name)
        raw = spec["value"] if spec else quantities[name].default
        return units.parse_value(raw, quantities[name].unit)

    if "hbm_bandwidth" not in gpu.values or "parameter_count" not in model.values:
        return "1000 token/s", "TODO: a placeholder; measure the decode throughput of one replica"
    bandwidth = value(gpu, "hbm_bandwidth") * tp * value(model, "hbm_efficiency")
    step = value(model, "parameter_count") * value(model, "weight_bytes_per_param") / bandwidth
    tokens = units.to_display(value(model, "decode_batch"), "request") / step
    rounded = round(tokens, 2 - math.floor(math.log10(tokens)))
    return (f"{rounded:.10g} token/s",
            f"TODO: an estimate, not a measurement: decode_batch / (weights / (hbm_bandwidth x hbm_efficiency)), "
            f"reading KV ignored, so an upper bound for {model.id} on {tp} x {gpu.id}")


def _builds(path: Path) -> None:
    from capplan.analysis.pipeline import evaluate_plan   # deferred: sympy and pint load only to build the plan

    evaluate_plan(path)


def _read_attributes(path: Path) -> bytes | None:
    """``.gitattributes`` as it is (None: there is none), read as a file a pull request may have
    planted: a regular file of bounded size, never a FIFO, a device or a folder."""
    try:
        return bounded.read(path, GITATTRIBUTES_BYTES)
    except FileNotFoundError:
        return None
    except OSError as err:
        reason = ("not a regular file (a device, a FIFO or a folder)" if isinstance(err, bounded.NotRegular)
                  else err.strerror or str(err))
        raise CapplanError(f"cannot read it: {reason}", file=str(path)) from None


def _gitattributes(path: Path, current: bytes | None) -> str:
    """Add the lines that fold capplan's outputs; keep whatever the file already says, byte for byte."""
    have = set((current or b"").splitlines())
    missing = [line.encode() for line in GITATTRIBUTES if line.encode() not in have]
    if not missing:
        return "current"
    lead = b"" if not current or current.endswith(b"\n") else b"\n"
    path.write_bytes((current or b"") + lead + b"\n".join([GITATTRIBUTES_NOTE.encode(), *missing]) + b"\n")
    return "extended" if current else "written"
