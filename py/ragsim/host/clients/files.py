"""Reading a file the user named: only a regular file (a FIFO or a device is refused, never
waited on), a text file no larger than the limits, and a failure to read one said as one sentence.
Every floor reads its inputs through these."""

import os
import stat

from ragsim import limits


def not_regular(path) -> str | None:
    """Why `path` is no regular file to read (a FIFO, a device, a socket: opening one can wait for
    ever), or None; a path that cannot be looked at says so in its OSError, raised."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"{path} is {kind}, not a regular file; give text files only"


def open_regular(path):
    """`path` opened for reading in binary, only when it is a regular file (checked on the open file,
    which is opened without waiting, so a FIFO never blocks); ValueError with one sentence otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(not_regular(path) or f"{path} is not a regular file; give text files only")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def unreadable(e: Exception) -> str:
    """A failure to read a file as one sentence (no final stop) naming the file: an OSError as `PATH
    cannot be read (Permission denied)` (not Python's `[Errno 13] ...`), a ValueError as it says."""
    if isinstance(e, OSError):
        reason = e.strerror or type(e).__name__
        return f"{e.filename} cannot be read ({reason})" if e.filename else f"a file cannot be read ({reason})"
    return str(e).rstrip(".")


def read_text_file(path: str) -> str:
    """A file's text, read no further than MAX_FILE_BYTES; ValueError with one sentence otherwise."""
    with open_regular(path) as f:
        head = f.read(min(8192, limits.MAX_FILE_BYTES + 1))
        if b"\0" in head:
            raise ValueError(f"{path} looks binary (it holds NUL bytes); give text files only")
        data = head + f.read(limits.MAX_FILE_BYTES + 1 - len(head))
    if len(data) > limits.MAX_FILE_BYTES:
        raise ValueError(f"{path} is larger than {limits.MAX_FILE_BYTES // 2**20} MB, the most audit reads from one "
                         "file; split it")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start}); convert it to UTF-8") from None
