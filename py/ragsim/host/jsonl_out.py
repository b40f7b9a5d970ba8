"""The JSON Lines a whole-corpus run writes (issue 26), and the checkpoint that lets `--resume` go on.

The output holds whole lines only: a line per document as each batch is finished, then a line per
fact (or question), then one summary line (`"type": "summary"`). Beside it, `OUT.resume` (JSON,
replaced atomically) records how many batches the lines hold, where they end and the run's merged
state; a resumed run cuts the output back to that point (a line half-written when the run was
killed goes) and carries on. The checkpoint is removed once the summary is written.
"""

import json
import os
import tempfile
import time

from ragsim.wire import jsonio


class ResumeError(Exception):
    """The output cannot be resumed (one sentence)."""


class Output:
    def __init__(self, path: str | None, every: float = 1.0):
        self.temporary = path is None
        if path is None:
            fd, path = tempfile.mkstemp(prefix="ragsim-", suffix=".jsonl")
            os.close(fd)
        self.path, self.every = path, every
        self.mark = path + ".resume"
        self.file = None
        self.last = 0.0
        self.docs_end = None

    def start(self, fingerprint: str) -> dict:
        """A fresh run: the output emptied, the state empty."""
        self.file = open(self.path, "wb")
        return {"fingerprint": fingerprint, "batches_done": 0, "documents": 0, "offset": 0,
                "best": {}, "positive": {}, "failed": []}

    def resume_state(self, fingerprint: str) -> dict | None:
        """The state of the run the output came from (None: nothing to resume, start afresh);
        `{"complete": True, "summary"}` when it was finished; ResumeError when it cannot go on."""
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            return None
        if not os.path.exists(self.mark):
            last = _last_line(self.path)
            if last is not None and last.get("type") == "summary":
                return {"complete": True, "summary": last}
            raise ResumeError(f"{self.path} has no checkpoint beside it ({os.path.basename(self.mark)}), so it "
                              "cannot be resumed; run again without --resume to start over.")
        state = self._checkpoint()
        if state.get("fingerprint") != fingerprint:
            raise ResumeError(f"{self.path} was written for other files or settings; give the same ones to "
                              "resume it, or run without --resume to start over.")
        self.file = open(self.path, "r+b")
        self.file.truncate(state["offset"])
        self.file.seek(state["offset"])
        return state

    def _checkpoint(self) -> dict:
        """The checkpoint beside the output, checked before it is trusted: its fields of the right
        kinds and where the document lines end inside the output; ResumeError otherwise."""
        damaged = ResumeError(f"{self.mark} is not a checkpoint of {self.path} (it is damaged, or says the output goes "
                              "further than it does); run without --resume to start over.")
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
        if not 0 <= state["offset"] <= os.path.getsize(self.path) or state["batches_done"] < 0:
            raise damaged
        return state

    def _write(self, record: dict) -> None:
        self.file.write((jsonio.dumps(record) + "\n").encode("utf-8"))

    def documents(self, lines) -> None:
        for line in lines:
            self._write(line)
        self.file.flush()

    def checkpoint(self, state: dict, force: bool = False) -> None:
        """The state, with where the document lines end, beside the output (at most every `every` s)."""
        self.file.flush()
        state["offset"] = self.file.tell()
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        tmp = self.mark + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f)
        os.replace(tmp, self.mark)

    def read_documents(self):
        """The document lines written (this run's and a resumed one's), in order."""
        self.file.flush()
        self.docs_end = self.file.tell()
        with open(self.path, "rb") as f:
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
        self._write(summary)
        self.file.close()
        if os.path.exists(self.mark):
            os.remove(self.mark)
        if self.temporary:
            os.remove(self.path)

    def close(self) -> None:
        if self.file is not None and not self.file.closed:
            self.file.close()
        if self.temporary and os.path.exists(self.path):
            os.remove(self.path)
            if os.path.exists(self.mark):
                os.remove(self.mark)


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
