"""The core stays pure: no module imports `js` or `pyodide` (the worker does the bridging)."""

import ast
import pathlib

CORE = pathlib.Path(__file__).resolve().parents[2] / "py" / "ragsim"
FORBIDDEN = {"js", "pyodide", "pyodide_js", "micropip"}


def imported_roots(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_no_core_module_imports_the_browser():
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) >= 8
    bad = {str(p.relative_to(CORE)): sorted(set(imported_roots(p)) & FORBIDDEN) for p in modules}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_check_itself_catches_an_import(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from pyodide.ffi import to_js\n")
    assert "pyodide" in set(imported_roots(sample))
