"""The record's SVG charts, each drawn on the shared canvas (svg.py) in the palette's colours."""
