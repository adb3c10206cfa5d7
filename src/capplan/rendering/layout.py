"""The presentation layout shared by the record and the workbook.

``templates/layout.yaml`` says which sections exist, in which order, and
which quantities and tables each shows; a team edits it to change what the
outputs present without touching Python.
"""

from __future__ import annotations

from capplan.analysis.declared import layout  # noqa: F401 - read by the analyses too, so kept below them
