"""Input mode's arms (``suitebench generate``): the random sweep, the mutation baselines, the
LLM arms and mixtures of them, each topped up to a budget of legal inputs by the gate (the
problem's validator, then the references' consensus), its runs cached like the audit's.
"""
