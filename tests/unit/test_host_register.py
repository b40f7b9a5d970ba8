"""CPython's hosts are registered by `ragsim.host.register()` only: importing the host package or any
of its modules registers nothing (the page's worker imports `ragsim.host.clients.pdf` inside Pyodide), a
second call changes nothing, and a run's worker processes have their parent's hosts, however they
were started."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "py")}

STATE = """
import json
import ragsim.host
from ragsim.rank import dense
from ragsim.split import semantic_split
from ragsim.text import tokens

def state():
    return [ragsim.host.registered(), len(tokens.FINDERS), len(dense.HOSTS), len(semantic_split.HOSTS)]
"""

IMPORTS = STATE + """
import pkgutil, importlib
for module in pkgutil.walk_packages(ragsim.host.__path__, "ragsim.host."):
    importlib.import_module(module.name)
states = [state()]
ragsim.host.register()
states.append(state())
ragsim.host.register()
states.append(state())
print(json.dumps(states))
"""

WORKERS = STATE + """
import multiprocessing, sys
from ragsim.host.corpus import pool

def probe(shared, item):
    return state()

if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")  # workers that inherit nothing from their parent
    if sys.argv[1] == "register":
        ragsim.host.register()
    print(json.dumps([state()] + [r for _, r in pool.Local(2).map(probe, None, range(3))]))
"""


def run(code: str, tmp_path, *args) -> list:
    script = tmp_path / "script.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120, env=ENV)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_importing_every_host_module_registers_nothing_and_register_is_idempotent(tmp_path):
    imported, registered, again = run(IMPORTS, tmp_path)
    assert imported == [False, 0, 0, 0]
    assert registered == again == [True, 1, 1, 1]


def test_a_runs_worker_processes_have_their_parents_hosts(tmp_path):
    parent, *workers = run(WORKERS, tmp_path, "register")
    assert parent == [True, 1, 1, 1] and workers == [parent] * 3
    parent, *workers = run(WORKERS, tmp_path, "none")
    assert parent == [False, 0, 0, 0] and workers == [parent] * 3
