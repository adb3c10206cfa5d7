"""Stage 2, the engine: formulas parsed into sympy (never evaluated as
text), the standard model of ``model/``, the dependency graph of a plan, the
dimension check of every formula, and the evaluation of each scenario."""
