"""host/ is built in floors (docs/architecture.md): commands (argument parsing and printing) ->
jobs (audit, eval and inspect as functions) -> corpus (the run protocol: files, batches, engines,
spill, progress, the resumable output) -> clients (stores, onnxruntime, endpoints, HTTP, PDFs).
Every import of a host module, inside functions too, points down or across its own floor; only
the package's `__init__` (register, embedder) sits directly in host/, and any floor may use it."""

from test_layers import CORE, graph

FLOORS = {"commands": 0, "jobs": 1, "corpus": 2, "clients": 3}
HOST = CORE / "host"


def floor(module: str) -> int | None:
    """The floor of a `ragsim.host.FLOOR...` module (None: the host package itself, or no host module)."""
    parts = module.split(".")
    return FLOORS[parts[2]] if parts[:2] == ["ragsim", "host"] and len(parts) > 2 else None


def test_every_host_module_sits_on_a_floor():
    loose = [p.name for p in HOST.glob("*.py") if p.name != "__init__.py"]
    folders = sorted(p.name for p in HOST.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert loose == [] and folders == sorted(FLOORS)


def test_every_host_import_points_down_or_across():
    up = [f"{m}:{line} imports {target}" for m, edges in graph().items() if floor(m) is not None
          for target, _, line in edges if floor(target) is not None and floor(target) < floor(m)]
    assert up == []


def test_the_floor_check_sees_an_import_up():
    assert floor("ragsim.host.clients.stores") > floor("ragsim.host.commands.console")
    assert floor("ragsim.host") is None and floor("ragsim.wire.api") is None
    edges = graph()["ragsim.host.commands.inspect_cli"]
    assert any(floor(t) == FLOORS["jobs"] for t, _, _ in edges)  # the check reads real edges
