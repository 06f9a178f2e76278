"""Read at start-up by every Python process a test starts during the reference's coverage run
(this directory is last on ``PYTHONPATH`` then, and only then): it traces the process for the
test that started it (:mod:`suitebench.suite.inside.probe.subcoverage`,
:func:`suitebench.suite.inside.probe.tracer.start_here`), then hands over to the project's
own ``sitecustomize``, if there is one further along ``sys.path``.
"""

import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _start() -> None:
    if not os.environ.get("SUITEBENCH_SUBCOVERAGE"):
        return
    # probe/subcover -> probe -> inside -> suite -> suitebench -> the directory holding it
    holder = _HERE
    for _ in range(5):
        holder = os.path.dirname(holder)
    added = holder not in sys.path
    if added:
        sys.path.append(holder)
    try:
        from suitebench.suite.inside.probe.tracer import start_here

        start_here()
    finally:
        if added and holder in sys.path:
            sys.path.remove(holder)


def _theirs() -> None:
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == _HERE:
            continue
        spec = importlib.util.spec_from_file_location(
            "sitecustomize", os.path.join(entry, "sitecustomize.py")
        )
        if spec is not None and spec.loader is not None and os.path.isfile(spec.origin or ""):
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


_start()
_theirs()
