"""The code stays readable. The Python core: no module over 400 lines (generated data aside), no
function over 60 lines, no class over 200. The page's scripts (app.js, assets/*.js, assets/js/**/*.js):
no module over 500 lines, no function over 90, no class over 360 (when these limits were set the
longest were 462, 84 and 353 lines: panels/settings-map.js, Computer.compute in compute.js and the
Investigate class in panels/investigate.js)."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE = ROOT / "py" / "ragsim"
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
    for path in (ROOT / "tests" / "conformance").glob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        assert "capsys.disabled()" not in text, path


# --- the page's scripts ---------------------------------------------------------------------------

PAGE_JS = [ROOT / "app.js", *sorted((ROOT / "assets").glob("*.js")), *sorted((ROOT / "assets" / "js").rglob("*.js"))]
JS_MODULE_LINES, JS_FUNCTION_LINES, JS_CLASS_LINES = 500, 90, 360

JS_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*|=>|\S")
PLAIN_BLOCK = {"if", "for", "while", "switch", "catch", "with"}  # `word (...) {` that is no function
REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {"", "=>", "return", "typeof", "case", "do", "else", "in", "of",
                                             "new", "delete", "void", "throw", "yield", "await"}


def js_blocks(src: str) -> list[tuple[str, str, int, int]]:
    """Every function and class in `src` as (kind, name, first line, last line), the lines of its `{`
    and its `}`. Braces are matched with strings, template literals (and their ${...}), comments and
    regex literals skipped. A `{` opens a function after `=>`, or after `(...)` that follows `function`
    or a name other than if/for/while/switch/catch (a method); a class after `class Name [extends X]`."""
    found, braces, parens, tokens = [], [], [], []  # tokens: [text, line, index of its "(" for a ")"]
    i, line = 0, 1

    def skip_template(i, line):  # inside a template literal: to its end, or into its next ${
        while src[i] != "`" and not src.startswith("${", i):
            line += src[i] == "\n" or src[i:i + 2] == "\\\n"
            i += 2 if src[i] == "\\" else 1
        return (i + 1, line, False) if src[i] == "`" else (i + 2, line, True)

    def after_template(i, line):
        i, line, opened = skip_template(i, line)
        if opened:
            braces.append(("${", "", line))
        else:
            tokens.append(["`", line, None])
        return i, line

    while i < len(src):
        c = src[i]
        if c.isspace():
            line, i = line + (c == "\n"), i + 1
        elif src.startswith("//", i):
            i = src.find("\n", i) if "\n" in src[i:] else len(src)
        elif src.startswith("/*", i):
            end = src.index("*/", i) + 2
            line, i = line + src.count("\n", i, end), end
        elif c in "'\"":
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == "\\" else 1
            tokens.append(["'", line, None])
            i = j + 1
        elif c == "`":
            i, line = after_template(i + 1, line)
        elif c == "/" and (tokens[-1][0] if tokens else "") in REGEX_AFTER:
            j, in_class = i + 1, False
            while src[j] != "/" or in_class:
                in_class = (in_class or src[j] == "[") and src[j] != "]"
                j += 2 if src[j] == "\\" else 1
            tokens.append(["/", line, None])
            i = re.compile(r"[a-z]*").match(src, j + 1).end()
        else:
            text = JS_TOKEN.match(src, i).group(0)
            i += len(text)
            if text == "(":
                parens.append(len(tokens))
            elif text == ")":
                tokens.append([")", line, parens.pop()])
                continue
            elif text == "{":
                braces.append(_opened_by(tokens, line))
            elif text == "}":
                kind, name, start = braces.pop()
                if kind == "${":
                    i, line = after_template(i, line)
                    continue
                if kind:
                    found.append((kind, name, start, line))
            tokens.append([text, line, None])
    assert not braces and not parens, (braces, parens)
    return found


def _opened_by(tokens, line) -> tuple[str, str, int]:
    """What the `{` about to be read opens, judged by the tokens before it: ("class" or "function",
    name, line), or ("", "", line) for a block or an object."""
    words = [t[0] for t in tokens[-5:]]
    if "class" in words and not {"{", "}", ";"} & set(words[words.index("class"):]):
        return "class", words[words.index("class") + 1], line
    last = tokens[-1] if tokens else ["", 0, None]
    if last[0] == "=>":
        return "function", "=>", line
    if last[0] == ")" and last[2]:
        before = tokens[last[2] - 1][0]
        if before == "function" or (re.match(r"[A-Za-z_$]", before) and before not in PLAIN_BLOCK):
            return "function", before, line
    return "", "", line


def js_too_long():
    out = []
    for p in PAGE_JS:
        rel = p.relative_to(ROOT).as_posix()
        src = p.read_text(encoding="utf-8")
        if src.count("\n") > JS_MODULE_LINES:
            out.append(f"{rel}: {src.count(chr(10))} lines")
        for kind, name, first, last in js_blocks(src):
            limit = JS_FUNCTION_LINES if kind == "function" else JS_CLASS_LINES
            if last - first + 1 > limit:
                out.append(f"{rel}:{first}: {kind} {name} {last - first + 1} lines")
    return out


def test_no_page_script_function_or_class_too_long():
    assert len(PAGE_JS) > 40 and js_too_long() == []


SAMPLE_JS = """import { x } from "./x.js";
const RE = /\\{[^}]*\\}/g, half = 4 / 2; // a regex with braces, a division: { never counted
/* a comment { */
export function outer(a) {
  if (a) { return `${a} {` + "}" + '{'; }
  const inner = (b) => {
    return `${ {b}.b }`;
  };
  return inner(a);
}
class Shape extends Base {
  area() {
    for (const s of this.sides) { s.x = { y: 1 }; }
  }
}
"""


def test_the_js_scanner_finds_functions_and_classes_past_strings_regexes_and_templates():
    assert js_blocks(SAMPLE_JS) == [("function", "=>", 6, 8), ("function", "outer", 4, 10),
                                    ("function", "area", 12, 14), ("class", "Shape", 11, 15)]
