"""Stage 3, rendering: one view of the results per plan (``view``), printed
as the Markdown record, the Excel workbook (through the sympy-to-Excel
printer) and the JSON document. Nothing here computes a number the model
does not hold."""
