"""Building benchmark instances (the ``build`` commands): mutants by operator (Python and
tree-sitter) and by an LLM aimed at requirements, min-cost-flow target selection, refinement
filters, spec drafting, and the edits to ``instance.toml`` that record what was built.
"""
