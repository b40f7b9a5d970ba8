"""Puts the core (py/) and the shared test helpers (tests/helpers.py) on the import path."""

import pathlib
import sys

TESTS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent / "py"))
sys.path.insert(0, str(TESTS))
