"""The part of suite mode that runs inside the sandbox, in the pytest process of a suite run.

These modules are loaded by the interpreter that runs a suite -- suitebench's own, or a
project's venv, which reaches them through a copy of this package alone
(:func:`suitebench.suite.execute.interpreter.plugin_root`) -- so the contract is: **the standard
library and pytest only** (``pytest``/``_pytest``), and of suitebench only
``suitebench.suite.inside``. Never the host side: not the other modules of ``suitebench.suite``, not
``suitebench.run``, not pydantic, numpy or anything else a project's venv may lack
(``tests/suite/inside/test_inside_boundary.py`` checks it).  The host imports from here, never
the other way round; what both sides read of a run's files (event names, message sizes, the timeout
marker) is :mod:`.wire`.
"""
