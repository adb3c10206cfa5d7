"""Stage 1, loading: read a plan's YAML (with line numbers), look up the
catalog, import benchmark files, and check every value against the model,
so that what the engine receives is a :class:`~capplan.loading.plan.Plan`
in base units with the file and line of each value."""
