"""Bundled data: the problems and instances ``suitebench demo`` runs on (also the test fixtures).

* ``problems/`` -- input mode: competitive-programming problems with references, brute-force
  solutions, validators, official tests and pools of submissions with real bugs;
* ``instances/`` -- suite mode: small programs (a Python CLI, a C CLI, a Python package) with a
  spec, a reference test suite and requirement-targeted mutants;
* ``suites/`` -- extra suites to score against the instances (one with every kind of bad test);
* ``implementations/`` -- patches that turn an instance's reference into a candidate
  implementation, to show R.
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
PROBLEMS_DIR = DATA_DIR / "problems"
INSTANCES_DIR = DATA_DIR / "instances"
SUITES_DIR = DATA_DIR / "suites"
IMPLEMENTATIONS_DIR = DATA_DIR / "implementations"
