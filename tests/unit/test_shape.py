"""The core stays readable: no module over 400 lines (generated data aside),
no function over 60 lines, no class over 200."""

import ast
import pathlib

CORE = pathlib.Path(__file__).resolve().parents[2] / "py" / "ragsim"
GENERATED = {"text/punkt_data.py", "text/wordpiece_vocab.py", "text/tokens/unicode_data.py"}


def too_long():
    out = []
    for p in sorted(CORE.rglob("*.py")):
        rel = p.relative_to(CORE).as_posix()
        src = p.read_text(encoding="utf-8")
        if rel not in GENERATED and src.count("\n") > 400:
            out.append(f"{rel}: {src.count(chr(10))} lines")
        for node in ast.walk(ast.parse(src)):
            n = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and n > 60:
                out.append(f"{rel}: function {node.name} {n} lines")
            elif isinstance(node, ast.ClassDef) and n > 200:
                out.append(f"{rel}: class {node.name} {n} lines")
    return out


def test_no_module_function_or_class_too_long():
    assert too_long() == []


def test_generated_modules_exist():
    assert all((CORE / g).is_file() for g in GENERATED)


def test_no_stray_print_from_the_conformance_tests():
    for path in (CORE.parents[1] / "tests" / "conformance").glob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        assert "capsys.disabled()" not in text, path
