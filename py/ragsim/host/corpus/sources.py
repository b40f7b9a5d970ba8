"""A knowledge base's files: the paths given, directories walked recursively (their files
matching `--glob`), each file read as the commands read one (`clients.files.read_text_file`, PDFs as
PyPDFLoader reads them) and a file that cannot be read skipped with its reason, never fatal.

Files come in a fixed order (the arguments as given, a directory's files sorted by path), so every
run over the same inputs numbers the same documents the same way.
"""

import fnmatch
import os
import pathlib
from dataclasses import dataclass

from ragsim.host.clients import pdf
from ragsim.host.clients.files import not_regular, read_text_file


@dataclass(frozen=True)
class Source:
    """One file of the corpus: its place in the order, its path and size in bytes."""

    seq: int
    path: str
    size: int


def walk(paths: list[str], pattern: str | None = None) -> tuple[list[Source], list[tuple[str, str]]]:
    """The files of `paths` in order, and the paths skipped with why (missing, or no such files).
    A file named directly is taken whatever `pattern` says; a directory's files only if they match it."""
    found, skipped, seen = [], [], set()
    for given in paths:
        if os.path.isdir(given):
            unread = len(skipped)
            inside = sorted(_files_under(given, pattern, skipped))
            if not inside and not any(path == given for path, _ in skipped[unread:]):
                skipped.append((given, f"holds no file{' matching ' + repr(pattern) if pattern else ''}"))
            candidates = inside
        elif os.path.exists(given):
            candidates = [given]
        else:
            skipped.append((given, "does not exist"))
            continue
        for path in candidates:
            if path in seen:
                continue
            seen.add(path)
            try:
                size = os.path.getsize(path)
                odd = not_regular(path)
            except OSError as e:
                skipped.append((path, f"cannot be read ({e.strerror})"))
                continue
            if odd:  # a FIFO or a device: opening it could wait for ever
                skipped.append((path, "is not a regular file"))
                continue
            found.append(Source(len(found), path, size))
    return found, skipped


def _files_under(root: str, pattern: str | None, skipped: list):
    """The files under `root` (hidden ones left out) matching `pattern`; a folder that cannot be read
    is put in `skipped` with why (os.walk would pass over it without a word)."""

    def unread(e: OSError) -> None:
        skipped.append((e.filename, f"is a folder that cannot be read ({e.strerror}), so its files were not read"))

    for base, dirs, files in os.walk(root, onerror=unread):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root)
            if pattern is None or fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(rel, pattern):
                yield path


def read(source: Source, pdf_mode: str = "page") -> list[dict]:
    """The documents of one file, as `eval` and `audit` read them: [{"id", "title", "text"}]; a file
    that cannot be read raises ValueError or OSError with one sentence."""
    if pdf.is_pdf(source.path):
        return pdf.load(source.path, pdf_mode)
    text = read_text_file(source.path)
    return [{"id": source.path, "title": pathlib.Path(source.path).name, "text": text}]


def read_or_skip(source: Source, pdf_mode: str = "page") -> tuple[list[dict], str | None]:
    """The documents of a file, or none and the reason it was skipped (unreadable, binary, not UTF-8)."""
    try:
        return read(source, pdf_mode), None
    except (OSError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return [], reason.rstrip(".")


def batches(sources: list[Source], target_bytes: int, most: int = 64) -> list[list[Source]]:
    """The files in order, cut into batches of about `target_bytes` (and at most `most` files)."""
    out, current, size = [], [], 0
    for s in sources:
        if current and (size + s.size > target_bytes or len(current) >= most):
            out.append(current)
            current, size = [], 0
        current.append(s)
        size += s.size
    if current:
        out.append(current)
    return out
