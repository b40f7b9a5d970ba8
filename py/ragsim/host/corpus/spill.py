"""What one pass of a streamed run leaves for the next, kept on disk by the worker that made
it, so a document is read, indexed and judged once however many passes need it, and nothing of it
is held in memory between the passes.

The run makes a private directory (`directory`) and names it in the passes' shared settings;
`keep` writes a batch's results there and returns their path, `load` reads them back on any worker
of the same machine. A worker that cannot write there, or read what was written (a Dask worker on
another machine), gets None: the pass after it then makes the same results again from the files,
so the run's results do not depend on where it ran.
"""

import os
import pickle
import shutil
import tempfile
import zlib
from contextlib import contextmanager


@contextmanager
def directory(prefix: str):
    """A private directory for a run's kept results, removed with them when the run ends."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def keep(shared: dict, name: str, value) -> str | None:
    """`value` written under the run's directory (`shared["spill"]`); its path, or None when it cannot be."""
    where = shared.get("spill")
    if not where:
        return None
    path = os.path.join(where, name)
    try:
        with open(path + ".part", "wb") as f:  # compressed: a third of the size for about 2% more time
            f.write(zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1))
        os.replace(path + ".part", path)
    except OSError:
        return None
    return path


def kept_name(batch, what: str) -> str:
    """The file a pass keeps `what` of `batch` in, named by the batch's first file."""
    return f"{what}-{batch[0].seq if batch else 0}.pickle"


def prepared(shared: dict, batch, what: str, made: tuple) -> dict:
    """A count pass's answer from `made`, its (statistics, work for the next pass): `per`, the
    statistics, and `kept`, where the work waits (`what` of `batch`), or None."""
    per, ready = made
    return {"per": per, "kept": keep(shared, kept_name(batch, what), ready)}


def kept_or_made(kept: str | None, prepare, shared: dict, batch):
    """What a count pass kept at `kept`, or, kept where this worker cannot read it, made again by
    `prepare(shared, batch)` (the work, its second part)."""
    ready = load(kept)
    return ready if ready is not None else prepare(shared, batch)[1]


def load(path: str | None):
    """What `keep` wrote at `path`, removed once read; None when there is nothing to read here."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            value = pickle.loads(zlib.decompress(f.read()))
    except (OSError, EOFError, pickle.UnpicklingError, zlib.error):
        return None
    try:
        os.remove(path)
    except OSError:
        pass
    return value
