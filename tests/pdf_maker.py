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
