"""Where the batches of a whole-corpus run execute: this process, a process pool on every
core (`--workers N`), or an existing Dask cluster (`--engine dask --scheduler ADDRESS`).

Every engine runs `fn(shared, item)` for each item and yields `(i, result)` in the items' order,
whatever order they finish in, with a bounded number in flight, so results are the same whichever
way a run goes and memory does not grow with the corpus. A worker that dies takes its batch with it:
the batch is retried (on a fresh pool, alone, or by Dask on another worker) and, when it fails
again, yielded as a `Failed` with the reason, so the run goes on without it.
"""

import os
import signal
import uuid
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import ragsim
from ragsim import host
from ragsim.host.corpus.refused import Refused
from ragsim.rank.queries import collection_paused


@dataclass(frozen=True)
class Failed:
    """A batch that could not be run, and why."""

    reason: str


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_SHARED = None


def _start_worker(shared, hosts: bool) -> None:
    global _SHARED
    _SHARED = shared
    _follow(hosts)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _call(fn, item):
    return _paused(fn, _SHARED, item)


def _follow(hosts: bool) -> None:
    """A worker's hosts are its parent's: registered there (`ragsim.host.register()`), so here, whether
    the worker was forked, spawned or is a Dask worker that imported only the batch's modules."""
    if hosts:
        host.register()


class WorkerMismatch(Exception):
    """A Dask worker runs another version of ragsim than the command (its results could differ)."""


def _remote(fn, shared, item, hosts: bool, version: str | None = None):
    if version is not None and version != ragsim.__version__:
        raise WorkerMismatch(ragsim.__version__)
    _follow(hosts)
    return _paused(fn, shared, item)


def _lacks_ragsim(e: BaseException) -> bool:
    """Whether a Dask worker's error says it cannot import ragsim (the function it was sent is ragsim's)."""
    return isinstance(e, ImportError) and getattr(e, "name", None) == "ragsim" or "No module named 'ragsim'" in str(e)


def _environment_error(address: str, e: BaseException) -> "Refused":
    """One sentence for a cluster whose workers cannot run this ragsim, as Dask's own "different
    environments" advice means: which version to install where."""
    here = f"ragsim {ragsim.__version__}"
    if isinstance(e, WorkerMismatch):
        return Refused(f"the Dask workers at {address} run ragsim {e.args[0]}, this command {here}: install {here} "
                           "on every worker (or run the command from their version) and run again")
    return Refused(f"the Dask workers at {address} cannot import ragsim (No module named 'ragsim'): install {here} "
                       "on every worker, in the Python environment the worker runs (pip install the project, or put "
                       "its py/ folder on the workers' PYTHONPATH), and run again")


def _paused(fn, shared, item):
    """`fn(shared, item)` with Python's cyclic collector paused: a batch makes millions of short-lived
    objects, and each collection of the oldest generation walks every object the worker holds (a
    Dask worker holds many more than a pool's), 10-20% of a batch's CPU time measured
    (benchmarks/bench_scale.py). The batch's objects are freed by their counts as usual meanwhile."""
    with collection_paused():
        return fn(shared, item)


class Local:
    """This process (one worker) or a process pool of `workers` processes."""

    def __init__(self, workers: int):
        self.workers = max(1, workers)
        self.retried = 0
        self._suspects = set()

    def describe(self) -> str:
        return "1 process" if self.workers == 1 else f"{self.workers} processes"

    def map(self, fn, shared, items):
        if self.workers == 1:
            for i, item in enumerate(items):
                try:
                    result = _paused(fn, shared, item)
                except (MemoryError, RecursionError, OSError) as e:  # this batch's own failure, not the run's
                    result = Failed(f"it could not be run ({type(e).__name__}: {_first_line(e)})")
                yield i, result
            return
        yield from self._pooled(fn, shared, list(items))

    def _pool(self, shared) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, initializer=_start_worker, initargs=(shared, host.registered()))

    def _pooled(self, fn, shared, items):
        pool = self._pool(shared)
        todo, done, running, nxt = deque(range(len(items))), {}, {}, 0
        alone = deque()  # batches in flight when a worker died: run one at a time to find the one that kills
        try:
            while nxt < len(items):
                isolating = bool(alone) or any(i in self._suspects for i in running.values())
                source = alone if alone else todo
                while source and len(running) < (1 if isolating else 2 * self.workers):
                    i = source.popleft()
                    running[pool.submit(_call, fn, items[i])] = i
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for f in finished:
                    i = running.pop(f)
                    try:
                        done[i] = f.result()
                        self._suspects.discard(i)
                    except BrokenProcessPool:
                        broken = True
                        running[f] = i
                    except (MemoryError, RecursionError, OSError) as e:
                        done[i] = Failed(f"it could not be run ({type(e).__name__}: {_first_line(e)})")
                if broken:
                    pool.shutdown(wait=False, cancel_futures=True)
                    lost = sorted(running.values())
                    running.clear()
                    self.retried += 1
                    if isolating:  # it ran alone: this batch kills its worker
                        done[lost[0]] = Failed("a worker process died while running it, twice")
                        self._suspects.discard(lost[0])
                    else:
                        alone.extend(lost)
                        self._suspects.update(lost)
                    pool = self._pool(shared)
                while nxt in done:
                    yield nxt, done.pop(nxt)
                    nxt += 1
        finally:  # every batch done: the workers end with the pool; else stopped where they are
            pool.shutdown(wait=nxt == len(items), cancel_futures=True)


class Dask:
    """An existing dask.distributed cluster at `address`: batches submitted, gathered as they finish."""

    def __init__(self, address: str, timeout: float = 10):
        try:
            from dask.distributed import Client
        except ImportError:
            raise Refused("--engine dask needs dask.distributed; install it with "
                              "`.venv/bin/pip install \"dask[distributed]\"`.") from None
        probe_scheduler(address, timeout)
        try:
            self.client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise Refused(f"the Dask scheduler at {address} cannot be reached ({_first_line(e)}); start it, "
                              "or give its address with --scheduler tcp://HOST:8786.") from None
        self.address = address
        self.retried = 0
        if self.client.nthreads():
            try:
                self.client.run(cores)  # a function of ragsim's: each worker must import ragsim to run it
            except Exception as e:  # noqa: BLE001  (Dask wraps the worker's ImportError in its own kinds)
                if _lacks_ragsim(e):
                    self.client.close()
                    raise _environment_error(address, e) from None
                raise

    def describe(self) -> str:
        n = sum(self.client.nthreads().values())
        return f"the Dask cluster at {self.address} ({n} threads)"

    @property
    def workers(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def map(self, fn, shared, items):
        from dask.distributed import as_completed

        items = list(items)
        if not self.client.nthreads():
            raise Refused(f"the Dask cluster at {self.address} has no workers; start some and run again.")
        [handle] = self.client.scatter([shared], broadcast=True, hash=False)  # one object, not one per key
        hosts = host.registered()
        limit = 2 * self.workers
        pending, done, nxt, index = deque(range(len(items))), {}, 0, {}
        flight = None

        def submit(i):
            key = f"{fn.__name__}-{uuid.uuid4().hex}"  # named on the dashboard by the pass, not the wrapper
            future = self.client.submit(_remote, fn, handle, items[i], hosts, ragsim.__version__, retries=1, key=key)
            index[future.key] = (i, future)
            return future

        try:
            while nxt < len(items):
                fresh = [submit(pending.popleft()) for _ in range(min(len(pending), limit - len(index)))]
                if flight is None:
                    flight = as_completed(fresh, loop=self.client.loop)
                else:
                    flight.update(fresh)
                future = next(flight)
                i, _ = index.pop(future.key)
                try:
                    done[i] = future.result()
                except Exception as e:  # a worker that died twice (KilledWorker), or the batch's own error
                    if isinstance(e, WorkerMismatch) or _lacks_ragsim(e):
                        raise _environment_error(self.address, e) from None  # every batch would fail alike
                    done[i] = Failed(f"the cluster could not run it ({type(e).__name__}: {_first_line(e)})")
                future.release()
                while nxt in done:
                    yield nxt, done.pop(nxt)
                    nxt += 1
        finally:
            if index:
                self.client.cancel([future for _, future in index.values()])

    def close(self) -> None:
        self.client.close()


def _first_line(e: Exception) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0].rstrip(".")


MAX_HANDSHAKE = 64 * 2**20  # bytes: a scheduler's first message is a few kilobytes


def probe_scheduler(address: str, timeout: float) -> None:
    """Before Dask's client is let near `address`: something listens there and opens as a Dask
    scheduler does, with its first message's length (Dask's TCP frames start with it, eight bytes,
    little-endian) within the deadline. Dask's own connect has no deadline for that handshake (a
    server that accepts and says nothing held it for minutes) and believes the length it is sent (a
    server sending anything else made it ask for exabytes). Refused with one sentence otherwise."""
    import socket
    import struct
    import time
    from urllib.parse import urlsplit

    scheme, _, rest = address.partition("://")
    if not rest:
        scheme, rest = "tcp", address
    if scheme != "tcp":
        raise Refused(f"the Dask scheduler address {address} is {scheme}://; ragsim connects over tcp:// only "
                          "(give --scheduler tcp://HOST:PORT).")
    parts = urlsplit("tcp://" + rest)
    try:
        port = parts.port or 8786
    except ValueError:
        raise Refused(f"the Dask scheduler address {address} has no port ragsim can read; give "
                          "--scheduler tcp://HOST:PORT.") from None
    where = f"the Dask scheduler at {address}"
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=timeout) as s:
            head = b""
            while len(head) < 8:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                got = s.recv(8 - len(head))
                if not got:
                    raise Refused(f"{where} closed the connection at once; is it a Dask scheduler?")
                head += got
    except ConnectionRefusedError:
        raise Refused(f"{where} cannot be reached: nothing listens there; start it (`dask scheduler`), or give "
                          "its address with --scheduler tcp://HOST:8786.") from None
    except (TimeoutError, socket.timeout):
        raise Refused(f"{where} accepted the connection but said nothing within {timeout:g} s, as a Dask "
                          "scheduler would; check that it is one, and that it is not overloaded.") from None
    except OSError as e:
        raise Refused(f"{where} cannot be reached ({e.strerror or type(e).__name__}); start it, or give its "
                          "address with --scheduler tcp://HOST:8786.") from None
    (length,) = struct.unpack("<Q", head)
    if length > MAX_HANDSHAKE:
        raise Refused(f"{where} does not speak Dask's protocol (its first message claims {length:,} bytes); "
                          "check the address.")


def engine(name: str, workers: int | None, scheduler: str | None):
    """The engine the options ask for; Refused with one sentence when it cannot be had."""
    if name == "dask":
        if not scheduler:
            raise Refused("--engine dask needs --scheduler ADDRESS (an existing cluster's scheduler, "
                              "e.g. tcp://127.0.0.1:8786).")
        return Dask(scheduler)
    if name != "local":
        raise Refused(f"--engine must be local or dask (got {name!r}).")
    if workers is not None and workers < 1:
        raise Refused(f"--workers must be at least 1 (got {workers}).")
    return Local(workers or cores())
