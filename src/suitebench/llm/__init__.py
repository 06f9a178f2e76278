"""The model client, kept apart from the agent harness because everything that asks a model uses it.

Input arms (:mod:`suitebench.generate`), benchmark construction (:mod:`suitebench.construct`,
``suitebench build``) and the agent harness's cost accounting all talk to a model, so the
client sits at the floor beside :mod:`suitebench.run` (it imports only :mod:`suitebench.model`
and :mod:`suitebench.run`):

* :mod:`suitebench.llm.client` -- one chat call to any OpenAI-compatible endpoint, cached,
  priced, retried (:class:`~suitebench.llm.client.ModelClient`);
* :mod:`suitebench.llm.prices` -- the price table in USD per million tokens (the bundled
  ``prices.toml`` beside it, extended by the user's own).
"""
