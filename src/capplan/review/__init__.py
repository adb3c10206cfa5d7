"""Review: what a change does (``diff``), how a number came about
(``explain``), whether a plan still says what it promised (``expect``), and
the JSON Schema editors use to catch a misspelt key as it is typed."""
