#!/usr/bin/env python3
"""Run examples/python_api.ipynb as Jupyter runs it and keep its outputs in the file (what GitHub shows).

    .venv/bin/python tools/run_notebook.py

Needs nbclient and ipykernel (the `test` extra). The kernel imports this checkout's core (py/) and
runs in examples/, as a reader's Jupyter would; no timing is recorded, so a run that gives the same
outputs leaves the file as it was. tests/unit/test_python_api.py fails when the kept outputs differ
from a fresh run's.
"""

import os
import pathlib
import sys

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "python_api.ipynb"


def main() -> int:
    os.environ["PYTHONPATH"] = str(ROOT / "py")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:  # an earlier run's timings
        cell.metadata.pop("execution", None)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    nbformat.write(nb, NOTEBOOK)
    print(f"ran {NOTEBOOK.relative_to(ROOT)}: {sum(c.cell_type == 'code' for c in nb.cells)} code cells", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
