"""Issue 37's red-team cases, one module a theme (``items_*.py``), run by ``benchmarks/redteam_37.py``."""
