"""Import a measured load sweep from raw benchmark files kept next to a plan.

A plan's ``load_sweep`` table can be imported instead of typed in.
:func:`read_sweep` finds the files inside the plan's repository
(``locate``; a pattern that reaches out of it is refused with a
:class:`PatternError`), recognises each file's format
from its content (the table of ``formats``) and turns every benchmark run in it into a
:class:`SweepPoint` in capplan's canonical units, one module per format:
``vllm`` (legacy ``benchmark_serving.py`` and ``vllm bench serve``),
``guidellm``, ``csv_table`` and ``estimate``. :func:`combine_replicates` (``replicates``)
then folds repeated runs at one arrival rate into one :class:`SweepRow`
(median and median absolute deviation); ``delivery`` words what a point
delivered of the load it was offered; ``closedloop`` says what closed-loop
runs bound and why they give no λ*; ``evidence`` compares what the files
measured (model, parallelism, token mix) with the plan. ``fields`` holds the helpers every
format reads values with.
"""

from capplan.loading.sweeps.closedloop import closed_loop_refusal
from capplan.loading.sweeps.delivery import delivery_text
from capplan.loading.sweeps.evidence import match_plan
from capplan.loading.sweeps.files import read_sweep
from capplan.loading.sweeps.locate import PatternError
from capplan.loading.sweeps.points import MissingPercentile, SweepFile, SweepPoint
from capplan.loading.sweeps.replicates import SweepRow, combine_replicates

__all__ = ["MissingPercentile", "closed_loop_refusal", "PatternError", "SweepFile", "SweepPoint", "SweepRow", "combine_replicates", "delivery_text", "match_plan", "read_sweep"]
