"""Puts the core (py/) and the shared test helpers (tests/helpers.py) on the import path."""

import pathlib
import sys

TESTS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent / "py"))
sys.path.insert(0, str(TESTS))

import ragsim.host  # noqa: E402,F401  (CPython's hosts, as `python -m ragsim` registers them: rank files, the model)
