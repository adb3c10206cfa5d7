"""Worst inputs inside their domains, one module of cases per area (see harness.py)."""
