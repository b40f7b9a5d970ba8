"""ragsim.pdf against LangChain's PyPDFLoader (langchain-community, pypdf 7.1.1 as build.py ships it):
the same documents, text for text, in mode "page" and "single", on PDFs written here by hand; and
one sentence naming the file for a password-protected, a text-less and a damaged PDF; and on PDFs
from real producers (reportlab's columns and rotations, fpdf2's shaped ligatures, pypdf's rotated
pages: tests/pdf_maker.py).

The expected documents come from PyPDFLoader itself: without langchain-community the test fails
(it is a test extra), rather than rebuild the expectation from the very pypdf calls it checks."""

import json

import pytest

import pdf_maker
from pdf_maker import encrypt, make_pdf, sample_pages
from ragsim.host.clients import pdf

pypdf = pytest.importorskip("pypdf")


def loader_documents(tmp_path, data: bytes, mode: str) -> list[str]:
    """PyPDFLoader(path, mode=mode).load() page contents, or the calls it makes when it is missing."""
    try:
        from langchain_community.document_loaders import PyPDFLoader
    except ImportError as e:
        pytest.fail(f"the PDF conformance tests compare with langchain-community's PyPDFLoader, which cannot be "
                    f"imported here ({e}): pip install -e '.[test]'")
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    return [d.page_content for d in PyPDFLoader(str(path), mode=mode).load()]


CASES = {
    "three pages": sample_pages(3),
    "an empty page among others": [["First page, one line."], [], ["Third page (with parentheses) and a \\ backslash."]],
    "accents and symbols": [["Café, naïve, façade, 50 € and 20 °C.", "Ünïcödé in WinAnsi: æ ø å ß."]],
    "long lines": [["word " * 40, "another line " * 20]],
}


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("mode", ["page", "single"])
def test_the_documents_are_pypdfloaders(tmp_path, case, mode, compress):
    data = make_pdf(CASES[case], compress=compress)
    got = pdf.read(data, "doc.pdf", mode)
    expected = loader_documents(tmp_path, data, mode)
    assert [d["text"] for d in got] == expected
    assert any(t.strip() for t in expected)  # the cases hold text, so the comparison is not of empties
    if mode == "page":
        assert [d["title"] for d in got] == [f"doc, page {i + 1}" for i in range(len(CASES[case]))]
        assert [d["page"] for d in got] == list(range(len(CASES[case])))
    else:
        assert len(got) == 1 and got[0]["title"] == "doc"


def test_progress_is_reported_every_ten_pages_and_at_the_end():
    seen = []
    docs = pdf.read(make_pdf(sample_pages(25)), "long.pdf", progress=lambda done, total: seen.append((done, total)))
    assert len(docs) == 25
    assert seen == [(10, 25), (20, 25), (25, 25)]


def test_an_owner_password_alone_still_reads(tmp_path):
    # An empty user password: pypdf (and so PyPDFLoader) decrypts it without asking.
    data = encrypt(make_pdf(sample_pages(2)), password="")
    assert [d["text"] for d in pdf.read(data, "open.pdf")] == loader_documents(tmp_path, data, "page")


@pytest.mark.parametrize("name, data, words", [
    ("locked.pdf", lambda: encrypt(make_pdf(sample_pages(2))), "protected by a password"),
    ("scan.pdf", lambda: make_pdf([[], []]), "no extractable text"),
    ("cut.pdf", lambda: make_pdf(sample_pages(2))[:300], "could not be read as a PDF"),
    ("text.pdf", lambda: b"just some text, not a PDF at all", "could not be read as a PDF"),
])
def test_a_pdf_without_text_gets_one_sentence_naming_it(name, data, words):
    with pytest.raises(pdf.PdfError) as caught:
        pdf.read(data(), name)
    message = str(caught.value)
    assert message.startswith(f"“{name}”") and words in message
    assert message.count(". ") == 0 and message.endswith(".") and "\n" not in message


def test_the_audit_command_reads_pdfs_a_document_per_page(tmp_path, capsys):
    from ragsim.host.commands import audit_cli

    path = tmp_path / "report.pdf"
    path.write_bytes(make_pdf(sample_pages(3)))
    assert audit_cli.main([str(path), "--size", "200", "--overlaps", "0,50", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["overlap"] for r in result["rows"]] == [0, 50]
    # The table's chunk count is the core's for the three pages as documents.
    pages = [{"id": f"{path}#page={i + 1}", "title": d["title"], "text": d["text"]}
             for i, d in enumerate(pdf.read(path.read_bytes(), "report.pdf"))]
    from ragsim.wire.audit import audit
    expected = audit({"documents": pages, "chunking": {"unit": "chars", "size": 200}, "overlaps": [0, 50], "precision_k": 3})
    # the streamed audit adds the corpus sentence and the files it skipped; the rest is one request's
    said = result.pop("sentence")
    assert result.pop("skipped") == []
    assert said == "No facts of this shape found across 3 documents" if not expected["facts"] else \
        said.startswith(f"{len(expected['facts'])} fact") and "across 3 documents; chunking destroys" in said
    assert result == json.loads(json.dumps(expected))
    assert audit_cli.main([str(path), "--size", "200", "--overlaps", "0"]) == 0
    assert capsys.readouterr().out.startswith("3 documents")
    assert audit_cli.main([str(path), "--pdf-mode", "single", "--size", "200", "--overlaps", "0"]) == 0
    assert capsys.readouterr().out.startswith("1 document,")  # one, not "1 documents"
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypt(make_pdf(sample_pages(1))))
    assert audit_cli.main([str(locked)]) == 1
    assert capsys.readouterr().err.strip() == "ragsim audit: “locked.pdf” is protected by a password; save an unprotected copy and add that."


def test_pdf_load_gives_page_ids(tmp_path):
    path = tmp_path / "r.pdf"
    path.write_bytes(make_pdf(sample_pages(2)))
    docs = pdf.load(str(path))
    assert [d["id"] for d in docs] == [f"{path}#page=1", f"{path}#page=2"]
    assert [d["text"] for d in docs] == [d["text"] for d in pdf.read(path.read_bytes(), "r.pdf")]
    with pytest.raises(ValueError, match="larger than"):
        pdf.load(str(path), max_bytes=100)


@pytest.fixture(scope="module")
def real_pdfs():
    return pdf_maker.real_world()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["page", "single"])
@pytest.mark.parametrize("name", ["reportlab, two columns", "reportlab, rotated text and /Rotate",
                                  "fpdf2, ligatures and columns", "pypdf, pages rotated"])
def test_pdfs_from_real_producers_read_as_pypdfloader_reads_them(tmp_path, real_pdfs, name, mode):
    data = real_pdfs[name]
    got = pdf.read(data, "real.pdf", mode)
    expected = loader_documents(tmp_path, data, mode)
    assert [d["text"] for d in got] == expected
    joined = " ".join(expected)
    assert len(joined) > 100 and ("offers" in joined or "ninety degrees" in joined)
