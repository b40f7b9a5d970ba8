"""Progress on stderr for a whole-corpus run: documents done, MB per second and the time
left, one line rewritten in place; nothing with `--quiet` or when stderr is not a terminal."""

import sys
import time


class Progress:
    def __init__(self, total_bytes: int, total_files: int, quiet: bool = False, stream=None, every: float = 0.5):
        self.stream = stream if stream is not None else sys.stderr
        self.on = not quiet and self.stream.isatty()
        self.total_bytes, self.total_files = max(total_bytes, 1), total_files
        self.every = every
        self.began = self.last = time.perf_counter()
        self.phase, self.done_bytes, self.done_files = "", 0, 0
        self.shown = False

    def start(self, phase: str) -> None:
        """A new pass over the corpus (`read`, `count`, `rank`)."""
        self.phase, self.done_bytes, self.done_files = phase, 0, 0
        self.began = time.perf_counter()

    def advance(self, files: int, nbytes: int) -> None:
        self.done_files += files
        self.done_bytes += nbytes
        now = time.perf_counter()
        if self.on and (now - self.last >= self.every or self.done_files >= self.total_files):
            self.last = now
            self.stream.write("\r" + self.line(now) + "\x1b[K")
            self.stream.flush()
            self.shown = True

    def line(self, now: float | None = None) -> str:
        elapsed = max((now or time.perf_counter()) - self.began, 1e-9)
        rate = self.done_bytes / elapsed / 1e6
        left = (self.total_bytes - self.done_bytes) / (self.done_bytes / elapsed) if self.done_bytes else None
        eta = "-" if left is None else f"{left:,.0f} s left"
        return (f"{self.phase}: {self.done_files:,} of {self.total_files:,} files, "
                f"{self.done_bytes / 1e6:,.1f} MB, {rate:,.1f} MB/s, {eta}")

    def end(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
