"""Analyses computed from evaluations: flip points, holds and breakeven, the
simulation's statistics, crossings. Rendering only reads what these return."""
