"""ragsim: simulate the retrieval half of a RAG pipeline, deterministically, in pure Python.

`ragsim.simulate`, `ragsim.evaluate`, `ragsim.audit` and `ragsim.inspect` are the Python API
(`ragsim.pyapi`, docs/python.md). They are loaded when first used (PEP 562), so `import ragsim`
alone loads nothing but this file: the page's worker imports the pure core without the host layer.
"""

__version__ = "0.1.0"

API = ("simulate", "evaluate", "audit", "inspect", "RequestError", "Result", "Simulation", "Evaluation",
       "Audit", "Inspection")


def __getattr__(name: str):
    if name in API:
        from ragsim import pyapi

        return getattr(pyapi, name)
    raise AttributeError(f"module 'ragsim' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *API])
