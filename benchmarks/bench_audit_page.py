"""The corpus audit in the page: Playwright drives the built page in Chromium and times "Run the audit".

Two collections, as in benchmarks/bench_audit.py (whose `built_in()` and `large()` make them): the
built-in one (loaded with "Load example collection") and a ~500,000-character one (chosen as .md
files). Fixed windows of 900 characters, six overlaps (0, 25, 50, 100, 150, 300): one worker call
per overlap, as the page makes them. The time is the page's own, from the click to the last row
(`#audit[data-seconds]`), after the simulation and the sweep for the collection have settled. Aim:
under 2 s for 500,000 characters.

    python benchmarks/bench_audit_page.py [--repeat 3]
"""

import argparse
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_audit import large  # noqa: E402
from bench_page import served_browser  # noqa: E402

SETTLED = """() => {
  const r = window.ragsim;
  return document.body.dataset.state === "ready" && r.shownRequest() !== null
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request())
    && document.getElementById("sweep").dataset.state === "ready";
}"""


def settle(page):
    page.wait_for_function(SETTLED, polling=100, timeout=120_000)


def run_audit(page, repeat):
    times = []
    for _ in range(repeat):
        settle(page)
        page.click("#audit-run")
        page.wait_for_function("() => document.getElementById('audit').dataset.state === 'done'", timeout=120_000)
        times.append(float(page.locator("#audit").get_attribute("data-seconds")))
    return times, page.locator("#audit-status").inner_text()


def report(label, chars, times, status):
    # The first run also detects the facts (kept with each document's index for the runs after it).
    print(f"{label:<22} {chars:>9,} chars   first {times[0]:.2f} s   best {min(times):.2f} s   "
          f"median {statistics.median(times):.2f} s   ({status})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with served_browser() as (browser, url):
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.goto(url)
        page.wait_for_function("() => document.body.dataset.state === 'ready'", timeout=180_000)

        page.click("#load-collection")
        page.wait_for_function("() => window.ragsim.request().documents.length === 6")
        chars = sum(len(d["text"]) for d in page.evaluate("window.ragsim.request()")["documents"])
        report("built-in collection", chars, *run_audit(page, args.repeat))

        docs = large()
        files = [{"name": f"{d['id']}", "mimeType": "text/markdown", "buffer": d["text"].encode()} for d in docs]
        page.evaluate("location.hash = ''")  # back to the single example, which the files replace
        page.wait_for_function("() => window.ragsim.request().documents.length === 1")
        page.locator("#add-files").set_input_files(files)
        page.wait_for_function(f"() => window.ragsim.request().documents.length === {len(docs)}")
        page.get_by_label("Unit", exact=True).select_option("chars")
        page.get_by_label("Chunk size", exact=True).fill("900")
        page.get_by_label("Overlap", exact=True).fill("0")
        chars = sum(len(d["text"]) for d in docs)
        report(f"{len(docs)} documents", chars, *run_audit(page, args.repeat))


if __name__ == "__main__":
    main()
