"""`python -m ragsim audit FILE... --unit chars --size 900 --overlaps 0,25,50,100,150,300 [--json]`.

Runs the corpus audit over text files and prints the table (or, with --json, the data).
Exit status 0, 2 for settings that break the contract, 1 for files that cannot be read as text.
"""

import argparse
import json
import pathlib
import sys

from .audit import DEFAULT_OVERLAPS, audit


def _read(path: str) -> str:
    data = pathlib.Path(path).read_bytes()
    if b"\0" in data[:8192]:
        raise ValueError(f"{path} looks binary (it holds NUL bytes); give text files only")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start}); convert it to UTF-8") from None


def table(result: dict) -> str:
    """The audit as a fixed-width table, one row per overlap."""
    k = result["precision_k"]
    head = ("overlap", "chunks", "stored", "facts", "destroyed", "destroyed<=overlap", f"found top {k}", f"dropped top {k}")
    lines = ["  ".join(f"{h:>{max(len(h), 8)}}" for h in head)]
    for row in result["rows"]:
        if row.get("error"):
            lines.append(f"{row['overlap']:>8}  skipped: {row['error']}")
            continue
        cells = (row["overlap"], row["chunks"], row["units_stored"], row["facts"], row["destroyed"],
                 row["destroyed_within_overlap"], row["found_top_k"], row["dropped_top_k"])
        lines.append("  ".join(f"{c:>{max(len(h), 8)}}" for c, h in zip(cells, head)))
    return "\n".join(lines)


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragsim audit", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="text or Markdown files, one document each")
    parser.add_argument("--strategy", default="window", help="splitter (default: window)")
    parser.add_argument("--unit", default="chars", help="words or chars (window and sentences)")
    parser.add_argument("--size", type=int, default=900)
    parser.add_argument("--overlaps", default=",".join(map(str, DEFAULT_OVERLAPS)),
                        help="comma-separated overlaps, e.g. 0,25,50")
    parser.add_argument("--top", type=int, default=3, help="the k of the precision check (default 3)")
    parser.add_argument("--json", action="store_true", help="print the data as JSON")
    args = parser.parse_args(argv)
    try:
        overlaps = [int(o) for o in args.overlaps.split(",") if o.strip()]
    except ValueError:
        print(f"ragsim audit: --overlaps takes whole numbers separated by commas (got {args.overlaps!r}).", file=sys.stderr)
        return 2
    documents = []
    for path in args.files:
        try:
            text = _read(path)
        except (OSError, ValueError) as e:
            print(f"ragsim audit: {e}", file=sys.stderr)
            return 1
        documents.append({"id": path, "title": pathlib.Path(path).name, "text": text})
    chunking = {"strategy": args.strategy, "size": args.size}
    if args.strategy in ("window", "sentences"):
        chunking["unit"] = args.unit
    result = audit({"documents": documents, "chunking": chunking, "overlaps": overlaps, "precision_k": args.top})
    if "error" in result:
        print(f"ragsim audit: {result['error']['field']}: {result['error']['message']}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"{len(documents)} documents, {len(result['facts'])} facts, {args.strategy} {args.unit if 'unit' in chunking else ''} size {args.size}")
        print(table(result))
    return 0
