"""The Python API, for notebooks and scripts (docs/python.md): `ragsim.simulate`, `ragsim.evaluate`,
`ragsim.audit` and `ragsim.inspect`, the four commands as calls that take plain values and the
objects a RAG notebook holds (LangChain and LlamaIndex splitters, Documents, nodes, vector stores and
indexes), and answer result objects with `to_dict()` (the command's JSON) and an inline picture in
Jupyter. The layer above the host modules: `import ragsim` loads it only when one of these names is
first used (`ragsim/__init__.py`), so the page's worker never does.
"""

from ragsim.errors import RequestError
from ragsim.pyapi.calls import audit, evaluate, inspect, simulate
from ragsim.pyapi.results import Audit, Evaluation, Inspection, Result, Simulation

__all__ = ["simulate", "evaluate", "audit", "inspect", "RequestError", "Result", "Simulation", "Evaluation",
           "Audit", "Inspection"]
