"""build.py: reproducible dist/, a valid core wheel, honest lock hashes, content-hashed names whose
references are all rewritten, and a server with the MIME types Pyodide needs.

Builds from a snapshot of the sources in a temporary directory, so edits landing in the checkout
during the run cannot make two builds differ."""

import hashlib
import json
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

pytestmark = pytest.mark.slow  # builds the site, several times


def snapshot(dest: Path) -> Path:
    """A copy of everything build.py reads, at dest."""
    shutil.copytree(ROOT / "py", dest / "py", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dest)
    shutil.copy(ROOT / "build.py", dest)
    shutil.copytree(ROOT / "buildlib", dest / "buildlib", ignore=shutil.ignore_patterns("__pycache__"))
    for name in build.PAGE_FILES:
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, dest)
    shutil.copytree(ROOT / "assets", dest / "assets")
    return dest


def tree(directory: Path) -> dict[str, str]:
    return {p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("src"))


@pytest.fixture(scope="module")
def dist(source, tmp_path_factory) -> Path:
    return build.build(tmp_path_factory.mktemp("out") / "dist", root=source)


@pytest.fixture(scope="module")
def info(dist) -> dict:
    return json.loads((dist / "build.json").read_text())


def test_two_builds_are_identical(source, dist, tmp_path):
    again = build.build(tmp_path / "again", root=source)
    assert tree(again) == tree(dist)


def test_command_line_builds_into_out(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(tmp_path / "d")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "d" / "build.json").read_text())["pyodide"]["version"] == build.PYODIDE_VERSION


def test_pyodide_runtime_only_and_versioned(dist, info):
    runtime = dist / f"pyodide-{build.PYODIDE_VERSION}"
    assert info["pyodide"]["dir"] == f"pyodide-{build.PYODIDE_VERSION}/"
    wheels = {Path(p).name for n, p in info["wheels"].items() if n != "ragsim"}
    assert {p.name for p in runtime.iterdir()} == set(build.PYODIDE_RUNTIME_FILES) | wheels


def test_lock_entries_carry_the_real_hashes(dist, info):
    runtime = dist / info["pyodide"]["dir"]
    lock = json.loads((runtime / "pyodide-lock.json").read_text())
    for name in ("micropip", "packaging", "snowballstemmer"):
        entry = lock["packages"][name]
        wheel = runtime / entry["file_name"]
        assert info["wheels"][name] == info["pyodide"]["dir"] + entry["file_name"]
        assert entry["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
        assert entry["version"] == entry["file_name"].split("-")[1]
    stem = lock["packages"]["snowballstemmer"]
    assert (stem["imports"], stem["package_type"], stem["install_dir"], stem["depends"]) == \
        (["snowballstemmer"], "package", "site", [])


def test_core_wheel_is_valid_and_importable(dist, info, source):
    path = dist / info["wheels"]["ragsim"]
    assert path.parent.name == hashlib.sha256(path.read_bytes()).hexdigest()[:build.HASH_LEN]
    version = build.project_metadata(source)["version"]
    assert path.name == f"ragsim-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        record = wheel.read(f"ragsim-{version}.dist-info/RECORD").decode().splitlines()
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if not digest:
                assert name.endswith("RECORD")
                continue
            data = wheel.read(name)
            assert int(size) == len(data)
            assert digest == "sha256=" + build.base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert {i.date_time for i in wheel.infolist()} == {build.ZIP_DATE}
        assert "Tag: py3-none-any" in wheel.read(f"ragsim-{version}.dist-info/WHEEL").decode()
    sources = {f"ragsim/{p.relative_to(source / 'py' / 'ragsim').as_posix()}" for p in build.core_sources(source)}
    assert sources <= set(names) and "ragsim/wire/api.py" in sources
    assert len(record) == len(names)
    # Importable straight from the zip: the wheel is the package.
    run = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                          "import ragsim.wire.api as a; print(a.__file__); "
                          "print(a.simulate({'documents': [], 'query': ''}).get('error', {}).get('field'))",
                          str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].startswith(str(path))


def test_hashed_names_match_content_and_every_reference_is_rewritten(dist, info):
    assert {"app.js", "assets/worker.js", "assets/js/worker-client.js", "assets/build-config.js"} <= set(info["assets"])
    for original, hashed in info["assets"].items():
        data = (dist / hashed).read_bytes()
        assert hashed == build.hashed_name(original, data)
        assert not (dist / original).exists()
    shipped = [p for p in dist.rglob("*") if p.suffix in build.REWRITE_SUFFIXES
               and info["pyodide"]["dir"] not in p.relative_to(dist).as_posix() + "/"]
    for path in shipped:
        text = path.read_text()
        for original, hashed in info["assets"].items():
            if path == dist / hashed:
                continue  # a file cannot name its own hash (worker-client.js's usage comment names itself)
            assert not build.reference_pattern(original.rsplit("/", 1)[-1]).search(text), (path, original)
    index = (dist / "index.html").read_text()
    assert info["assets"]["app.js"] in index


def test_worker_config_points_at_the_built_files(dist, info):
    config_path = dist / info["assets"]["assets/build-config.js"]
    body = config_path.read_text()
    config = json.loads(body[body.index("export default ") + len("export default "):].rstrip().rstrip(";"))
    base = config_path.parent
    assert (base / config["coreWheel"]).resolve() == (dist / info["wheels"]["ragsim"]).resolve()
    assert (base / config["pyodide"] / "pyodide.mjs").resolve().is_file()
    worker = (dist / info["assets"]["assets/worker.js"]).read_text()
    assert f'from "./{Path(info["assets"]["assets/build-config.js"]).name}"' in worker
    gate = (dist / info["assets"]["assets/js/worker-client.js"]).read_text()
    assert Path(info["assets"]["assets/worker.js"]).name in gate


def test_the_page_imports_the_cores_splitter_registry(source, dist, info):
    body = (dist / info["assets"]["assets/js/splitters.js"]).read_text()
    table = json.loads(body[body.index("export const REGISTRY = ") + len("export const REGISTRY = "):].rstrip().rstrip(";"))
    run = subprocess.run([sys.executable, "-c", "import ragsim.split as s; print(s.registry_json())"],
                         capture_output=True, text=True, env={"PYTHONPATH": str(source / "py")}, check=True)
    assert table == json.loads(run.stdout)
    params = (dist / info["assets"]["assets/js/params.js"]).read_text()
    assert f'from "./{Path(info["assets"]["assets/js/splitters.js"]).name}"' in params


def test_a_core_change_renames_the_chain_above_it(source, info, tmp_path):
    changed = snapshot(tmp_path / "src")
    with open(changed / "py" / "ragsim" / "__init__.py", "a") as f:
        f.write("\n# a change\n")
    assert build.source_digest(changed) != build.source_digest(source)
    other = json.loads((build.build(tmp_path / "dist", root=changed) / "build.json").read_text())
    assert other["wheels"]["ragsim"] != info["wheels"]["ragsim"]
    for name in ("assets/build-config.js", "assets/worker.js", "assets/js/worker-client.js"):
        assert other["assets"][name] != info["assets"][name]
    assert other["wheels"]["micropip"] == info["wheels"]["micropip"]


def test_freshness_follows_the_sources(source, dist):
    assert build.is_fresh(dist, source)
    assert not build.is_fresh(dist, ROOT / "no-such-dir")


def test_missing_index_html_is_a_clear_error(source, tmp_path, capsys):
    bare = tmp_path / "bare"
    shutil.copytree(source, bare, ignore=shutil.ignore_patterns("index.html"))
    with pytest.raises(build.BuildError, match="index.html is missing"):
        build.build(tmp_path / "out", root=bare)
    run = subprocess.run([sys.executable, str(bare / "build.py"), "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "index.html is missing" in run.stderr and "Traceback" not in run.stderr


def test_refuses_to_replace_a_directory_that_is_not_a_build(source, tmp_path):
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me")
    with pytest.raises(build.BuildError, match="not a previous build"):
        build.build(tmp_path / "precious", root=source)
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"


def test_rewrite_follows_references_in_order():
    files = {"index.html": b'<script type="module" src="app.js"></script>',
             "app.js": b'import { Gate } from "./assets/gate.js";',
             "assets/gate.js": b'new URL("./worker.js", import.meta.url)',
             "assets/worker.js": b'// worker.js is not a reference in prose\nimport c from "./cfg.js";',
             "assets/cfg.js": b"export default {};",
             "assets/notes.txt": b'"app.js"'}
    out, renamed = build.hash_and_rewrite(files)
    assert set(renamed) == {"app.js", "assets/gate.js", "assets/worker.js", "assets/cfg.js"}
    assert out["assets/notes.txt"] == b'"app.js"'  # not a file whose references are rewritten
    worker = out[renamed["assets/worker.js"]].decode()
    assert worker.startswith("// worker.js is not")
    assert f'"./{renamed["assets/cfg.js"].split("/")[-1]}"' in worker
    assert out["index.html"] == f'<script type="module" src="{renamed["app.js"]}"></script>'.encode()
    assert re.fullmatch(r"app\.[0-9a-f]{10}\.js", renamed["app.js"])


def test_rewrite_refuses_ambiguous_names_and_cycles():
    with pytest.raises(build.BuildError, match="share the name"):
        build.hash_and_rewrite({"a/x.js": b"", "b/x.js": b""})
    with pytest.raises(build.BuildError, match="circular"):
        build.hash_and_rewrite({"a.js": b'import "./b.js";', "b.js": b'import "./a.js";'})


def test_server_sends_the_types_pyodide_needs(dist, tmp_path):
    (tmp_path / "page.html").write_text("<p>test page</p>")
    server = build.make_server(dist, 0, mounts={"/__tests__/": tmp_path}, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    runtime = json.loads((dist / "build.json").read_text())["pyodide"]["dir"]
    expected = {runtime + "pyodide.mjs": "text/javascript", runtime + "pyodide.asm.wasm": "application/wasm",
                "build.json": "application/json", "index.html": "text/html; charset=utf-8",
                "__tests__/page.html": "text/html; charset=utf-8"}
    try:
        for path, mime in expected.items():
            with urllib.request.urlopen(base + path) as response:
                assert response.headers["Content-Type"] == mime, path
                body = response.read()
            local = tmp_path / "page.html" if path.startswith("__tests__/") else dist / path
            assert body == local.read_bytes()
        with urllib.request.urlopen(base + "index.html") as response:
            assert response.headers["Cache-Control"] == "no-cache"
        with urllib.request.urlopen(base + runtime + "pyodide.mjs") as response:
            assert "immutable" in response.headers["Cache-Control"]
    finally:
        server.shutdown()
        server.server_close()
