"""The formula language and the model it describes, below every other layer.

The formula parser and the one tree walker, units and their syntax, value
domains, the model's types and reader, and the bounded YAML reader. Nothing
here imports loading, engine, analysis or rendering.
"""
