"""Tiny PDFs for the tests, written by hand (standard library only): pages of Helvetica text lines,
pages with no text at all, and damaged files. Encrypted copies are made with pypdf's writer."""

import zlib


def _escape(line: str) -> bytes:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("cp1252")


def make_pdf(pages: list[list[str]], compress: bool = True) -> bytes:
    """A PDF with one page per item, each page its lines of text top-down (WinAnsi, i.e. cp1252, text only);
    a page with no lines has an empty content stream (what a scanned page's text layer amounts to)."""
    objects: list[bytes] = []  # object n + 1 is objects[n]
    n_pages = len(pages)
    font_id = 3
    first_page = 4
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for i, lines in enumerate(pages):
        content_id = first_page + 2 * i + 1
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font_id} 0 R >> >> "
                       f"/Contents {content_id} 0 R >>".encode())
        body = b""
        if lines:
            body = b"BT /F1 11 Tf 14 TL 72 740 Td " + b" ".join(b"(" + _escape(line) + b") Tj T*" for line in lines) + b" ET"
        if compress:
            data = zlib.compress(body)
            objects.append(f"<< /Length {len(data)} /Filter /FlateDecode >>\nstream\n".encode() + data + b"\nendstream")
        else:
            objects.append(f"<< /Length {len(body)} >>\nstream\n".encode() + body + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def encrypt(pdf: bytes, password: str = "secret", algorithm: str = "RC4-128") -> bytes:
    """`pdf` protected by a user password (RC4: pypdf needs no crypto library to write or read it)."""
    import io

    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=password, owner_password=password, algorithm=algorithm)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def sample_pages(n: int) -> list[list[str]]:
    """n pages of distinct sentences, so every page's text and its chunks differ."""
    return [[f"Page {p + 1} line {k + 1}: the invoice number for account {p * 10 + k} is INV-{p:03d}{k}."
             for k in range(6)] for p in range(n)]


# --- PDFs from real producers: what people upload is not written by hand ----------------------------
# reportlab (ReportLab's own PDF writer), fpdf2 (with HarfBuzz shaping, so "fi", "ff", "ffl" become
# ligature glyphs that only the font's ToUnicode map turns back into letters) and pypdf's writer
# (a page rotated after the fact). The font: DejaVu Sans (Debian's fonts-dejavu-core) where it is
# installed, else Bitstream Vera, which reportlab carries (DejaVu's ancestor, with the fi/fl ligatures).


def _font() -> str:
    import pathlib

    import reportlab

    dejavu = pathlib.Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    return str(dejavu if dejavu.is_file() else pathlib.Path(reportlab.__file__).parent / "fonts" / "Vera.ttf")



PROSE = ("The office offers affordable flights to fifty fjords. Efficient staff file the final figures "
         "before the official deadline, and the ﬂuffy waffles are free. Café naïve résumé; 東京 and Αθήνα.")


def reportlab_columns() -> bytes:
    """Two pages set in two columns by reportlab's platypus frames, justified, with a heading."""
    import io

    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph

    pdfmetrics.registerFont(TTFont("DejaVu", _font()))
    styles = getSampleStyleSheet()
    body = styles["BodyText"].clone("body", fontName="DejaVu", alignment=4)
    out = io.BytesIO()
    doc = BaseDocTemplate(out, pagesize=A4, title="columns", author="tests")
    w, h = A4
    frames = [Frame(40, 40, (w - 100) / 2, h - 80, id="left"), Frame(60 + (w - 100) / 2, 40, (w - 100) / 2, h - 80, id="right")]
    doc.addPageTemplates([PageTemplate(id="two", frames=frames)])
    story = [Paragraph("Harbour report", styles["Heading1"])]
    story += [Paragraph(f"Paragraph {i}. {PROSE}", body) for i in range(40)]
    doc.build(story)
    return out.getvalue()


def reportlab_rotated() -> bytes:
    """A landscape page drawn rotated (text at 90 degrees) and a page carrying /Rotate 90."""
    import io

    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out)
    c.saveState()
    c.translate(300, 100)
    c.rotate(90)
    c.drawString(0, 0, "This line is drawn at ninety degrees on an upright page.")
    c.restoreState()
    c.drawString(72, 700, "An upright line on the same page.")
    c.showPage()
    c.setPageRotation(90)
    c.drawString(72, 500, "A page whose /Rotate is 90: viewers turn it, the text stays in page space.")
    c.showPage()
    c.save()
    return out.getvalue()


def fpdf_ligatures() -> bytes:
    """fpdf2 with HarfBuzz text shaping over DejaVu Sans: ligature glyphs, accents, Greek and CJK
    (DejaVu has no CJK: fpdf2 leaves those glyphs missing), in a multi-column layout."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_font("DejaVu", fname=_font())
    pdf.set_font("DejaVu", size=11)
    pdf.set_text_shaping(True)
    pdf.add_page()
    pdf.multi_cell(0, 6, PROSE + "\n\n" + "Affine offsets suffice for the office's filing. " * 6)
    pdf.add_page()
    with pdf.text_columns(ncols=2, gutter=8) as cols:
        for i in range(12):
            cols.write(f"Column text {i}: {PROSE} ")
    return bytes(pdf.output())


def pypdf_rotated(source: bytes) -> bytes:
    """`source` rewritten by pypdf's writer with its first page rotated by 90 and its second by 270."""
    import io

    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(source)))
    for page, angle in zip(writer.pages, (90, 270)):
        page.rotate(angle)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def real_world() -> dict:
    """name -> bytes of each PDF above."""
    columns = reportlab_columns()
    return {"reportlab, two columns": columns, "reportlab, rotated text and /Rotate": reportlab_rotated(),
            "fpdf2, ligatures and columns": fpdf_ligatures(), "pypdf, pages rotated": pypdf_rotated(columns)}
