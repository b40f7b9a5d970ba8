"""Puts the core (py/) and the shared test helpers (tests/helpers.py) on the import path, and picks the
Hypothesis profile: "ci" (derandomized: the same examples every run, so a failure in CI reproduces
anywhere; selected when CI=true) or the default (random, for finding new failures locally)."""

import os
import pathlib
import sys

from hypothesis import settings

TESTS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent / "py"))
sys.path.insert(0, str(TESTS))

import ragsim.host  # noqa: E402

ragsim.host.register()  # CPython's hosts, as `python -m ragsim` registers them: rank files, the model
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "default"))
