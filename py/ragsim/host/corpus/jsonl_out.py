"""The files the commands write: each written beside its place and moved into it
(os.replace) only when whole, an existing file replaced only when asked; and the JSON Lines a
whole-corpus run writes, with the checkpoint that lets `--resume` go on.

`refuse_existing` says, before anything is read, that a file would be replaced without `--force`;
`replaced(path)` writes one file whole or not at all (`export -o`). A run's output (`Output`) holds
whole lines only: a line per document as each batch is finished, then a line per fact (or question),
then one summary line (`"type": "summary"`). They are written to `OUT.part`, moved onto `OUT` with the
summary; beside it, `OUT.resume` (JSON, replaced atomically) records how many batches the lines hold,
where they end and the run's merged state; a run whose state is too large to rewrite so often
keeps its parts as JSON lines in `OUT.resume.jsonl` (`keep_part`), the checkpoint saying where they end.
An interrupted run keeps them all, and a resumed one cuts the
lines back to that point (a line half-written when the run was killed goes) and carries on; a run
that fails otherwise removes them, and `OUT` is as it was.
"""

import contextlib
import json
import os
import shutil
import tempfile
import time

from ragsim.host.corpus.refused import Refused
from ragsim.wire import jsonio


def refuse_existing(path: str | None, force: bool, resume: bool | None = None) -> None:
    """ValueError with one sentence when `path` names a file (not standard output, "-") that exists
    and is not empty, and neither `force` nor `resume` says to replace it or go on from it (`resume`
    None: the command has no --resume)."""
    if not path or path == "-" or force or resume:
        return
    if resume is not None and os.path.exists(path + ".resume"):
        raise ValueError(f"{path}.part holds the lines of an interrupted run; give --resume to go on from it, or "
                         "--force to start over")
    if not os.path.lexists(path):
        return
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        return
    also = "" if resume is None else ", or --resume to go on from it"
    raise ValueError(f"{path} exists already; give --force to replace it{also}")


def _into_place(work: str, path: str) -> None:
    """The finished `work` file moved onto `path` (keeping the mode of the file it replaces)."""
    if os.path.isfile(path):
        shutil.copymode(path, work)
    os.replace(work, path)


@contextlib.contextmanager
def replaced(path: str, encoding: str = "utf-8"):
    """A text file to write that replaces `path` only when the block ends without an exception: it is
    written beside `path` (same folder, so the move is atomic) and removed on any failure."""
    folder, name = os.path.split(os.path.abspath(path))
    fd, work = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
    try:
        os.chmod(work, 0o666 & ~_umask())  # as open() would have made it, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding=encoding) as f:
            yield f
        _into_place(work, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(work)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Output:
    def __init__(self, path: str | None, every: float = 1.0):
        self.temporary = path is None
        if path is None:
            fd, path = tempfile.mkstemp(prefix="ragsim-", suffix=".jsonl")
            os.close(fd)
        self.path, self.every = path, every
        self.work = path if self.temporary else path + ".part"  # the lines until the summary is written
        self.mark = path + ".resume"
        self.kept = self.mark + ".jsonl"  # the parts of a run's state, a line each (`keep_part`)
        self.file = self.kept_file = None
        self.last = 0.0
        self.docs_end = None
        self.keep = False  # an interrupted run's lines and checkpoint stay for --resume
        self.started = self.temporary  # whether the lines are this run's (a resumed run's never go)
        self.finished = False

    def start(self, fingerprint: str) -> dict:
        """A fresh run: the lines empty (those of an earlier run at OUT.part gone), the state empty."""
        for old in (self.mark, self.kept):
            if os.path.exists(old) and not self.temporary:
                os.remove(old)
        self.started = True
        self.file = open(self.work, "wb")
        return {"fingerprint": fingerprint, "batches_done": 0, "documents": 0, "offset": 0,
                "best": {}, "positive": {}, "failed": []}

    def resume_state(self, fingerprint: str) -> dict | None:
        """The state of the run the output came from (None: nothing to resume, start afresh);
        `{"complete": True, "summary"}` when it was finished; Refused when it cannot go on."""
        if not os.path.exists(self.work) or os.path.getsize(self.work) == 0:
            if not os.path.isfile(self.path) or os.path.getsize(self.path) == 0:
                return None
            last = _last_line(self.path)
            if last is not None and last.get("type") == "summary":
                return {"complete": True, "summary": last}
            raise Refused(f"{self.path} is no finished run and has no lines of an interrupted one beside it "
                              f"({os.path.basename(self.work)}), so it cannot be resumed; give --force instead of "
                              "--resume to start over.")
        if not os.path.exists(self.mark):
            raise Refused(f"{self.work} has no checkpoint beside it ({os.path.basename(self.mark)}), so it "
                              "cannot be resumed; give --force instead of --resume to start over.")
        state = self._checkpoint()
        if state.get("fingerprint") != fingerprint:
            raise Refused(f"{self.work} was written for other files or settings; give the same ones to "
                              "resume it, or --force instead of --resume to start over.")
        self.file = open(self.work, "r+b")
        self.file.truncate(state["offset"])
        self.file.seek(state["offset"])
        if "kept_offset" in state:
            self.kept_file = open(self.kept, "r+b")
            self.kept_file.truncate(state["kept_offset"])
            self.kept_file.seek(state["kept_offset"])
        return state

    def _checkpoint(self) -> dict:
        """The checkpoint beside the output, checked before it is trusted: its fields of the right
        kinds and where the document lines end inside the output; Refused otherwise."""
        damaged = Refused(f"{self.mark} is not a checkpoint of {self.work} (it is damaged, or says the output goes "
                              "further than it does); give --force instead of --resume to start over.")
        try:
            with open(self.mark, encoding="utf-8") as f:
                state = json.load(f)
        except (OSError, ValueError, RecursionError):
            raise damaged from None
        kinds = {"fingerprint": str, "batches_done": int, "documents": int, "offset": int, "best": dict,
                 "positive": dict, "failed": list}
        if not isinstance(state, dict) or any(not isinstance(state.get(k), kind) or isinstance(state.get(k), bool)
                                              for k, kind in kinds.items()):
            raise damaged
        if not 0 <= state["offset"] <= os.path.getsize(self.work) or state["batches_done"] < 0:
            raise damaged
        if "kept_offset" in state and not (type(state["kept_offset"]) is int and os.path.isfile(self.kept)
                                           and 0 <= state["kept_offset"] <= os.path.getsize(self.kept)):
            raise damaged
        return state

    def _write(self, record: dict) -> None:
        self.file.write((jsonio.dumps(record) + "\n").encode("utf-8"))

    def documents(self, lines) -> None:
        for line in lines:
            self._write(line)
        self.file.flush()

    def keep_part(self, record: dict) -> None:
        """A part of the run's state kept as a line beside the output, read back by `kept_parts`."""
        if self.kept_file is None:
            self.kept_file = open(self.kept, "wb")
        self.kept_file.write((jsonio.dumps(record) + "\n").encode("utf-8"))

    def kept_parts(self):
        """The parts `keep_part` kept, up to where the checkpoint resumed from says they end."""
        if self.kept_file is None:
            return
        self.kept_file.flush()
        end = self.kept_file.tell()
        with open(self.kept, "rb") as f:
            while f.tell() < end and (line := f.readline()):
                yield json.loads(line)

    def checkpoint(self, state: dict, force: bool = False) -> None:
        """The state, with where the document lines end, beside the output (at most every `every` s)."""
        self.file.flush()
        state["offset"] = self.file.tell()
        if self.kept_file is not None:
            self.kept_file.flush()
            state["kept_offset"] = self.kept_file.tell()
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        tmp = self.mark + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(state, f)
            os.replace(tmp, self.mark)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise

    def interrupted(self, state: dict) -> str:
        """The checkpoint written at once and the lines kept for --resume; where they are, in words.
        What was written after the state's last checkpoint (Ctrl-C in the middle of a batch's lines)
        is cut off first, so the lines and kept parts end where the state says."""
        for f, end in ((self.file, state["offset"]), (self.kept_file, state.get("kept_offset", 0))):
            if f is not None:
                f.flush()
                f.truncate(end)
                f.seek(end)
        self.checkpoint(state, force=True)
        self.keep = True
        return f"{self.work} holds them"

    def read_documents(self):
        """The document lines written (this run's and a resumed one's), in order."""
        self.file.flush()
        self.docs_end = self.file.tell()
        with open(self.work, "rb") as f:
            while f.tell() < self.docs_end:
                line = f.readline()
                if not line:
                    break
                yield json.loads(line)

    def read_lines(self):
        """Every line of a finished output."""
        with open(self.path, "rb") as f:
            for line in f:
                yield json.loads(line)

    def fact(self, record: dict) -> None:
        self._write({"type": "fact", **record})

    def line(self, record: dict) -> None:
        self._write(record)

    def finish(self, summary: dict) -> None:
        """The summary written and the whole output moved onto OUT; the checkpoint removed."""
        self._write(summary)
        self.file.close()
        if self.temporary:
            os.remove(self.path)
        else:
            _into_place(self.work, self.path)
        self.finished = True
        self._close_kept()
        for done in (self.mark, self.kept):
            if os.path.exists(done):
                os.remove(done)

    def close(self) -> None:
        """The file closed (an error closing it is the one the run already met: not raised again), and
        the lines and checkpoint of a run started afresh removed unless it finished or was interrupted
        (an interrupted run's are kept for --resume, and those a run resumed from were there before)."""
        if self.file is not None and not self.file.closed:
            with contextlib.suppress(OSError):
                self.file.close()
        self._close_kept()
        if self.finished or not self.started or (self.keep and not self.temporary):
            return
        for path in (self.work, self.mark, self.mark + ".tmp", self.kept):
            with contextlib.suppress(OSError):
                os.remove(path)


    def _close_kept(self) -> None:
        if self.kept_file is not None and not self.kept_file.closed:
            with contextlib.suppress(OSError):
                self.kept_file.close()


def _last_line(path: str):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - (1 << 20)))
        lines = f.read().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
