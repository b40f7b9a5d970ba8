"""The core's folders are its layers (docs/architecture.md): text -> split -> rank -> judge -> wire,
with the host modules and then the Python API (pyapi) on top. Every import in every module, including
imports inside functions, points down or across its own layer, never up; the modules import each
other without a cycle; and no module imports another module's underscore names. One exception:
the package itself names the Python API's functions (`ragsim.simulate`, ...) through a PEP 562
`__getattr__` that imports `ragsim.pyapi` when one is first used, so `import ragsim` alone loads
nothing above the core."""

import ast
import pathlib

CORE = pathlib.Path(__file__).resolve().parents[2] / "py" / "ragsim"
LAYERS = {"": 0, "text": 1, "split": 2, "rank": 3, "judge": 4, "wire": 5, "host": 6, "pyapi": 7}
LAZY = {("ragsim", "ragsim.pyapi")}  # the package's `__getattr__` (module docstring): the one edge up


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["ragsim", *parts])


def layer(name: str) -> int:
    parts = name.split(".")
    if parts[1:2] == ["__main__"]:
        return LAYERS["host"]
    return LAYERS[parts[1]] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else LAYERS[""]


def modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(CORE.rglob("*.py"))}


def imports(name: str, path: pathlib.Path, known: set[str]):
    """(imported module, names taken from it, line) for every import of a ragsim module in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "ragsim":
                    yield a.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "ragsim":
                continue
            names = []
            for a in node.names:  # a name that is a module is an import of that module
                sub = f"{target}.{a.name}"
                if sub in known:
                    yield sub, [], node.lineno
                else:
                    names.append(a.name)
            if names:
                yield target, names, node.lineno


def graph():
    known = set(modules())
    return {name: list(imports(name, path, known)) for name, path in modules().items()}


def test_every_import_points_down():
    up = [f"{m}:{line} imports {target}" for m, edges in graph().items() for target, _, line in edges
          if layer(target) > layer(m) and (m, target) not in LAZY]
    assert up == []


def test_no_import_cycles():
    edges = {m: {t for t, _, _ in es if t != m and (m, t) not in LAZY} for m, es in graph().items()}
    # a package imports its own modules to register them: that is not a cycle through the package
    state, cycles = {}, []

    def visit(m, trail):
        state[m] = 1
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                cycles.append(" -> ".join(trail[trail.index(t):] + [t]) if t in trail else f"{m} -> {t}")
            elif t not in state:
                visit(t, trail + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_no_import_of_underscore_names():
    bad = [f"{m}:{line} takes {n} from {target}" for m, edges in graph().items() for target, names, line in edges
           for n in names if n.startswith("_") and not n.startswith("__")]
    bad += [f"{m} imports the private module {t}" for m, edges in graph().items() for t, _, _ in edges
            if any(p.startswith("_") and not p.startswith("__") for p in t.split("."))]
    assert bad == []


def test_the_checks_see_a_bad_import(tmp_path, monkeypatch):
    """The graph reads relative imports, imports inside functions and module names given to `from`."""
    pkg = tmp_path / "ragsim"
    (pkg / "text").mkdir(parents=True)
    (pkg / "wire").mkdir()
    for p in (pkg / "__init__.py", pkg / "text" / "__init__.py", pkg / "wire" / "__init__.py"):
        p.write_text("")
    (pkg / "wire" / "api.py").write_text("X = 1\n")
    (pkg / "text" / "index.py").write_text("def f():\n    from ..wire import api\n    from ..wire.api import _x\n")
    monkeypatch.setattr(__import__(__name__), "CORE", pkg)
    g = graph()
    assert ("ragsim.wire.api", [], 2) in g["ragsim.text.index"]
    assert ("ragsim.wire.api", ["_x"], 3) in g["ragsim.text.index"]
    assert layer("ragsim.wire.api") > layer("ragsim.text.index")


def test_the_lazy_edge_is_inside_the_package_getattr_only():
    """`ragsim/__init__.py` imports `ragsim.pyapi` only inside `__getattr__`, never at import time."""
    tree = ast.parse((CORE / "__init__.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert top == []
    lazy = [f.name for f in tree.body if isinstance(f, ast.FunctionDef)
            for n in ast.walk(f) if isinstance(n, ast.ImportFrom) and n.module == "ragsim"]
    assert lazy == ["__getattr__"]
