"""Adapters to external performance models that predict a configuration's throughput and latency.

Each runs its tool in a separate process (the tool is heavy, optional and may
live in another virtual environment) and answers in capplan's terms; only
``capplan estimate`` uses them, a build never does. ``TOOLS`` names the
adapter module of each ``--with`` choice.
"""

TOOLS = {"aiconfigurator": "aiconfigurator", "aisimulate": "aiconfigurator"}
