"""PDF text as LangChain's `PyPDFLoader` gives it (a host module: it needs `pypdf`, not the core).

`PyPDFLoader(path)` hands the file to `PyPDFParser` (langchain-community 0.4.2,
`document_loaders/parsers/pdf.py`), which with its defaults does exactly this:

    reader = pypdf.PdfReader(io.BytesIO(data), password=None)
    for page in reader.pages:
        text = page.extract_text(extraction_mode="plain")      # pypdf >= 4; 3.x: extract_text()
        text = _merge_text_and_extras([""], text).strip()      # no images parser: the text unchanged
    mode="page" (the default): one Document per page, page_content = text (empty pages too),
                               metadata page (0-based) and page_label (reader.page_labels[i])
    mode="single":             one Document, page_content = "\\n\\f".join(texts) (_DEFAULT_PAGES_DELIMITER)

`read(data, name, mode)` returns those documents as [{"title", "text"}] and raises `PdfError` with
one sentence naming the file when the PDF cannot give text: it needs a password, it is broken, or
no page has any extractable text (a scan: pages that are images). Used by the page's worker
(pypdf installed on demand) and by `python -m ragsim audit/eval` for .pdf files.
"""

import io

PAGES_DELIMITER = "\n\f"  # langchain_community.document_loaders.parsers.pdf._DEFAULT_PAGES_DELIMITER
MODES = ("page", "single")


class PdfError(ValueError):
    """A PDF that gives no text, with the sentence to show."""


def read(data: bytes, name: str = "document.pdf", mode: str = "page", progress=None, every: int = 10) -> list[dict]:
    """PyPDFLoader's documents for the PDF `data`: [{"title", "text", "page", "page_label"}] per page
    (mode "page") or one {"title", "text"} (mode "single"). `progress(done, total)` is called after
    every `every` pages and after the last."""
    if mode not in MODES:
        raise ValueError(f'mode must be "page" or "single" (got {mode!r}).')
    import pypdf
    from pypdf import errors

    stem = name[:-4] if name.lower().endswith(".pdf") else name
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), password=None)
        pages = reader.pages
        total = len(pages)
        texts, labels = [], []
        for i, page in enumerate(pages):
            texts.append(_page_text(pypdf, page))
            labels.append(reader.page_labels[i])
            if progress is not None and ((i + 1) % every == 0 or i + 1 == total):
                progress(i + 1, total)
    except errors.FileNotDecryptedError:
        raise PdfError(f"“{name}” is protected by a password; save an unprotected copy and add that.") from None
    except errors.DependencyError:
        raise PdfError(f"“{name}” is encrypted with AES, which this page cannot decrypt; save an unencrypted copy and add that.") from None
    except Exception as e:  # pypdf raises many kinds on a damaged file; all mean the same to the reader
        raise PdfError(f"“{name}” could not be read as a PDF ({type(e).__name__}: {str(e)[:80]}); it may be damaged.") from None
    if total == 0:
        raise PdfError(f"“{name}” has no pages.")
    if not any(t.strip() for t in texts):
        raise PdfError(f"“{name}” has no extractable text: its {total} {'page is' if total == 1 else 'pages are'} "
                       "images (a scan?), so run OCR on it first.")
    if mode == "single":
        return [{"title": stem, "text": PAGES_DELIMITER.join(texts)}]
    return [{"title": f"{stem}, page {label}", "text": text, "page": i, "page_label": label}
            for i, (text, label) in enumerate(zip(texts, labels))]


def _page_text(pypdf, page) -> str:
    """`PyPDFParser._extract_text_from_page` in plain mode, then `.strip()` as lazy_parse does."""
    if pypdf.__version__.startswith("3"):
        return page.extract_text().strip()
    return page.extract_text(extraction_mode="plain").strip()


def is_pdf(path: str) -> bool:
    return path.lower().endswith(".pdf")


def load(path: str, mode: str = "page", max_bytes: int | None = None) -> list[dict]:
    """The documents of the PDF at `path` for the command line: [{"id", "title", "text"}], ids
    `path#page=N` (1-based) in mode "page", `path` in mode "single". ValueError with one sentence
    (PdfError, a file over `max_bytes`, pypdf missing)."""
    import pathlib

    name = pathlib.Path(path).name
    with open(path, "rb") as f:
        data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise ValueError(f"{path} is larger than {max_bytes // 2**20} MB, the most read from one file")
    try:
        docs = read(data, name, mode)
    except ImportError:
        raise ValueError(f"{path} is a PDF, and reading PDFs needs pypdf: .venv/bin/pip install pypdf==7.1.1 in the ragsim checkout (python3 build.py test installs it)") from None
    if mode == "single":
        return [{"id": path, "title": docs[0]["title"], "text": docs[0]["text"]}]
    return [{"id": f"{path}#page={d['page'] + 1}", "title": d["title"], "text": d["text"]} for d in docs]
