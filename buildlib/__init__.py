"""The parts of build.py, split by job; build.py is the entry and re-exports them."""
