"""What the analyses hand the outputs: the artifacts' schema, a layer of its own below the analyses.

As dbt's runner computes its artifacts and its docs only read them, :mod:`capplan.analysis`
computes these values (the flip points, the candidates' ranking, the simulation) and
:mod:`capplan.rendering` reads them without importing the analyses. Here are the plain values
both sides share: what the layout declares (:mod:`.declared`), the flip search's answers
(:mod:`.answers`), the holds, ranking and simulation found (:mod:`.holds`, :mod:`.ranking`,
:mod:`.simulation`), the demand strategies an evaluation prices (:mod:`.demand`) and the
provenance of a candidate's λ* (:mod:`.transfer`).
"""
