"""Servers the store tests start on 127.0.0.1 and stop: PostgreSQL with pgvector (the binaries the
`pgserver` package bundles) and Chroma (`chroma run`). Each is a context manager yielding its address;
each waits until the server answers, and stops the process it started on every way out."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(ready, process: subprocess.Popen, what: str, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        if ready():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not answer within {seconds} s: {log.read_text(errors='replace')[-2000:]}")


def _stop(process: subprocess.Popen, sig=signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def postgres():
    """A PostgreSQL 16 with pgvector, from pgserver's binaries, listening on 127.0.0.1 only with trust
    authentication: yields `postgresql://postgres@127.0.0.1:PORT/postgres`. Its data lives in a
    temporary folder of its own, removed at the end (not under pytest's, which pytest keeps private to
    root). As root it runs as the user `pgserver`, which pgserver creates as it does for itself:
    PostgreSQL refuses to run as root."""
    from pgserver._commands import POSTGRES_BIN_PATH

    folder = Path(tempfile.mkdtemp(prefix="ragsim-postgres-"))
    try:
        user = _postgres_user(folder, POSTGRES_BIN_PATH)
        data = folder / "pgdata"
        made = subprocess.run([str(POSTGRES_BIN_PATH / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                               "--encoding=utf8"], capture_output=True, text=True, user=user, cwd=folder)
        if made.returncode != 0:
            raise RuntimeError(f"initdb exited with {made.returncode}: {made.stderr[-2000:]}")
        port, log = free_port(), folder / "postgres.log"
        with open(log, "wb") as out:
            process = subprocess.Popen([str(POSTGRES_BIN_PATH / "postgres"), "-D", str(data), "-h", "127.0.0.1",
                                        "-p", str(port), "-k", str(folder)], stdout=out, stderr=subprocess.STDOUT,
                                       user=user, cwd=folder)
        try:
            isready = [str(POSTGRES_BIN_PATH / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)]
            _wait(lambda: subprocess.run(isready, capture_output=True).returncode == 0, process, "postgres", log)
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            _stop(process, signal.SIGINT)  # "fast" shutdown: sessions ended, nothing left running
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _postgres_user(folder: Path, binaries: Path):
    """None, or as root the user `pgserver`, given the folder and the binaries' folders."""
    if os.geteuid() != 0:
        return None
    from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

    entry = ensure_user_exists("pgserver")
    ensure_prefix_permissions(binaries)
    ensure_folder_permissions(binaries, 0o055)
    ensure_folder_permissions(binaries.parent / "lib", 0o044)
    os.chown(folder, entry.pw_uid, entry.pw_gid)
    return "pgserver"


@contextlib.contextmanager
def chroma(folder: Path):
    """`chroma run --path FOLDER --host 127.0.0.1 --port P`: yields (host, port)."""
    port, log = free_port(), folder.parent / f"{folder.name}-chroma.log"
    executable = shutil.which("chroma", path=str(Path(sys.executable).parent)) or "chroma"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with open(log, "wb") as out:
        process = subprocess.Popen([executable, "run", "--path", str(folder), "--host", "127.0.0.1", "--port",
                                    str(port)], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        _wait(lambda: _listening(port), process, "chroma run", log)
        yield "127.0.0.1", port
    finally:
        _stop(process)
