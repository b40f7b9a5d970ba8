"""Ask your own model on the page, in Chromium, against an OpenAI-compatible server this
module starts on 127.0.0.1 (tests/fake_openai.py, with CORS headers, every request counted).

The panel is off by default and nothing reaches the server before Ask is pressed (drags included);
Ask sends the exact context on screen and shows three samples with both checks; two settings are
compared side by side; a question set is asked at two settings in a table; a slow model is stopped;
each failure is one sentence; a remote endpoint is refused in the page without any request; an embed
has no panel. The model here reads only its context: it repeats the marked answer when the prompt
holds it, else says NOT IN CONTEXT, so what the page shows follows from the context it sent."""

from __future__ import annotations

import json
import socket
from urllib.parse import quote

import pytest

import fake_openai
from fake_openai import FakeOpenAI
from ragsim.wire import api as core
from ragsim.wire import ask_checks
from a11y import quiet
from test_page import INDEX, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

ANSWER = ("Hourly snapshots are kept for 48 hours, after which the nightly compaction job merges them into a "
          "single daily snapshot.")
COMPACTION = "Compaction runs at 02:00 in the volume's own time zone"
RESTORE = "Restoring a snapshot creates a new volume and leaves the original untouched."
CARDS = "#ask-answers .ask-card"


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI(answer=ANSWER, slow_s=20.0) as server:
        yield server


@pytest.fixture(scope="module")
def module_context(browser, server, offsite, fake):
    """The shared context's rules with one more origin allowed: the fake model server's."""
    model_origin = fake.endpoint.rsplit("/v1", 1)[0]  # (on 127.0.0.1 too: named for the reader)
    context = browser.new_context(viewport={"width": 1366, "height": 768})

    def ours(url: str) -> bool:  # this site, the model server, and any port on 127.0.0.1 (a refused one)
        return server.owns(url) or url.startswith(model_origin + "/") or url.startswith("http://127.0.0.1:")

    context.on("request", lambda request: None if ours(request.url) else offsite.append(request.url))
    context.route("**/*", lambda route: route.continue_() if ours(route.request.url) else route.abort("blockedbyclient"))
    yield context
    context.close()


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def at(page, fragment: str):
    """The page at `fragment` (through a different one first, so the hashchange always fires)."""
    page.evaluate("h => { location.hash = h; }", "k=9")
    page.wait_for_function("() => window.ragsim.request().retrieval.k === 9")
    page.evaluate("h => { location.hash = h; }", fragment)
    page.wait_for_function("() => window.ragsim.request().retrieval.k !== 9")
    return settle(page)


def open_panel(page, endpoint: str, model: str = "reader", samples: int = 3):
    if not page.locator("#ask-on").is_checked():
        page.get_by_label("Ask a model on this computer").check()
    page.get_by_label("Endpoint", exact=True).fill(endpoint)
    page.get_by_label("Model", exact=True).fill(model)
    page.get_by_label("Samples").fill(str(samples))


def ask_and_wait(page, key_size: int):
    page.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_function("() => !document.getElementById('ask-run').disabled", timeout=30_000)
    return page.locator(f'{CARDS}[data-key*=",{key_size},"]')


def samples_of(card):
    return [(li.locator(".ask-text").inner_text(), li.get_attribute("data-contains"), li.get_attribute("data-not-in-context"))
            for li in card.locator(".ask-sample").all()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_panel_is_off_by_default_and_nothing_is_sent_before_ask(page, fake, offsite):
    at(page, "size=24")
    assert page.locator("#ask").is_visible() and page.locator("#ask-body").is_hidden()
    assert not page.locator("#ask-on").is_checked()
    open_panel(page, fake.endpoint)
    assert page.locator("#ask-prompt").input_value() == ask_checks.DEFAULT_PROMPT  # shown in full, editable
    slider = page.get_by_label("Chunk size", exact=True)
    slider.focus()
    for key in ("ArrowLeft", "ArrowRight", "ArrowLeft", "ArrowRight"):  # drags with the panel open
        slider.press(key)
        settle(page)
    quiet(page)  # at rest, everything the drags set going done
    assert fake.requests == [] and offsite == []


def test_ask_shows_three_samples_with_both_checks_and_compares_two_settings(page, fake):
    at(page, "size=24")
    open_panel(page, fake.endpoint)
    fake.requests.clear()
    context = page.evaluate("window.ragsim.response().context")
    assert context == core.simulate(page.evaluate("window.ragsim.request()"))["context"] and ANSWER in context
    card = ask_and_wait(page, 24)
    assert samples_of(card) == [(f"From the context: {ANSWER}", "yes", "no")] * 3
    chats = fake.chats()
    assert len(chats) == 3 and [r["method"] for r in fake.requests].count("POST") == 3
    query = page.evaluate("window.ragsim.request().query")
    assert chats[0]["messages"] == [{"role": "user", "content": ask_checks.prompt(ask_checks.DEFAULT_PROMPT, context, query)}]
    assert chats[0]["temperature"] == 0.7 and chats[0]["model"] == "reader"
    assert card.locator(".ask-who").first.inner_text() == "Sample 1, the model's answer (reader):"
    assert card.locator(".ask-tally").inner_text() == "3 of 3 contain the answer · 0 of 3 say NOT IN CONTEXT"
    assert card.locator(".ask-meta").get_attribute("data-verdict") == "intact"
    assert card.locator(".ask-marked").inner_text() == f"The marked answer: “{ANSWER}”."
    assert card.locator(".ask-context pre").text_content() == context  # the exact context, as sent

    at(page, "size=23")  # the answer cut in half: no chunk holds it, so the model cannot say it
    cut_context = page.evaluate("window.ragsim.response().context")
    assert ANSWER not in cut_context
    other = ask_and_wait(page, 23)
    assert samples_of(other) == [("NOT IN CONTEXT", "no", "yes")] * 3
    assert other.locator(".ask-meta").get_attribute("data-verdict") == "cut"
    assert fake.chats()[3]["messages"][0]["content"] == ask_checks.prompt(ask_checks.DEFAULT_PROMPT, cut_context, query)
    # Both settings kept, side by side.
    assert page.locator(CARDS).count() == 2
    a, b = (page.locator(CARDS).nth(i).bounding_box() for i in range(2))
    assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"] + a["width"] - 1
    assert [h.inner_text() for h in page.locator(f"{CARDS} h3").all()] == \
        ["size 24 · overlap 6 · k 2 (window, words)", "size 23 · overlap 6 · k 2 (window, words)"]


def test_a_marked_facts_value_is_checked_too(page, fake):
    request = at(page, "size=24").evaluate("window.ragsim.request()")
    doc, text = request["documents"][0]["id"], request["documents"][0]["text"]
    name, value = text.index("Hourly snapshots"), text.index("48 hours")
    at(page, f"size=24&fact={quote(doc)}:{name}-{name + 16},{value}-{value + 8}")
    open_panel(page, fake.endpoint, samples=1)
    card = ask_and_wait(page, 24)
    assert card.locator(".ask-marked").inner_text() == f"The marked answer: “{ANSWER}” + “48 hours”."
    assert samples_of(card) == [(f"From the context: {ANSWER}", "yes", "no")]
    at(page, "size=24")


def test_a_model_answer_is_shown_as_text_never_as_html(page, fake):
    at(page, "size=24")
    open_panel(page, fake.endpoint, samples=1)
    page.get_by_role("button", name="Clear answers").click()
    page.locator("#ask-prompt").fill("<b>bold</b> {question}\n{context}")  # an edited prompt, sent as typed
    page.get_by_label("Model", exact=True).fill("html")
    card = ask_and_wait(page, 24)
    assert samples_of(card) == [(fake_openai.HTML_REPLY, "no", "no")]  # verbatim, as text
    assert card.locator(".ask-text *").count() == 0 and page.evaluate("window.__ragsimPwned === undefined")
    assert fake.chats()[-1]["messages"][0]["content"].startswith("<b>bold</b> How long")
    page.get_by_role("button", name="Default prompt").click()
    assert page.locator("#ask-prompt").input_value() == ask_checks.DEFAULT_PROMPT


def test_a_prompt_without_its_context_is_refused_before_any_request(page, fake):
    at(page, "size=24")
    open_panel(page, fake.endpoint)
    page.locator("#ask-prompt").fill("Answer this: {question}")
    before = len(fake.requests)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_function("() => !document.getElementById('ask-run').disabled")
    assert "no {context}" in page.locator(f'{CARDS}[data-key*=",24,"] .ask-problem').inner_text()
    assert len(fake.requests) == before
    page.get_by_role("button", name="Default prompt").click()


@pytest.mark.parametrize("endpoint, words", [
    ("http://example.com/v1", "on this computer only (localhost or 127.0.0.1)"),
    ("https://api.openai.com/v1", "api.openai.com is not"),
    ("http://[::1]:11434/v1", "use http://127.0.0.1"),
    ("localhost:11434", "is not an http:// address"),
])
def test_a_remote_endpoint_is_refused_in_the_page_without_any_request(page, fake, offsite, endpoint, words):
    at(page, "size=24")
    open_panel(page, endpoint)
    before, cards = len(fake.requests), page.locator(CARDS).count()
    page.get_by_role("button", name="Ask", exact=True).click()
    status = page.locator("#ask-status")
    assert words in status.inner_text() and status.get_attribute("data-kind") == "error"
    quiet(page)
    assert len(fake.requests) == before and offsite == [] and page.locator(CARDS).count() == cards


def test_the_policy_itself_lets_the_page_reach_this_computer_only(page, fake, offsite):
    """The second guard, under the panel's own check: the page's connect-src."""
    result = page.evaluate("""async (local) => {
      const seen = [];
      document.addEventListener("securitypolicyviolation", (e) => seen.push([e.violatedDirective, e.blockedURI]));
      const reach = (u) => fetch(u).then((r) => r.status, () => "refused");
      const out = { remote: await reach("http://example.com/v1/models"), local: await reach(local) };
      await new Promise((r) => setTimeout(r, 200));
      return { ...out, seen };
    }""", fake.endpoint + "/models")
    assert result["remote"] == "refused" and result["local"] == 200
    assert [d for d, _ in result["seen"]] == ["connect-src"] and result["seen"][0][1].startswith("http://example.com")
    assert offsite == []  # refused by the policy before any request left the page


@pytest.mark.parametrize("model, words", [
    ("crash", "answered HTTP 500: The server had an error"),
    ("gpt-99", "answered HTTP 404 (check the model's name and that the endpoint ends in /v1): The model `gpt-99` does not exist"),
    ("garbage", "did not answer with JSON"),
    ("shape", "without choices[0].message.content"),
    ("broken", "broke before the reply was complete"),
    ("refused", "Nothing answered at"),
    # a redirect to another host is the page's policy at work, said so (it was called CORS)
    ("redirect", "redirected the request to another address, which this page's policy does not let it reach"),
])
def test_each_failure_is_one_sentence_and_the_rest_of_the_page_is_unaffected(page, fake, offsite, model, words):
    at(page, "size=24")
    endpoint = f"http://127.0.0.1:{free_port()}/v1" if model == "refused" else fake.endpoint
    open_panel(page, endpoint, model="reader" if model == "refused" else model, samples=1)
    card = ask_and_wait(page, 24)
    problem = card.locator(".ask-problem").inner_text()
    assert words in problem and "\n" not in problem, problem
    assert page.locator("#ask-status").get_attribute("data-kind") == "error"
    assert page.locator("[data-verdict]").first.get_attribute("data-verdict") == "intact"
    assert page.evaluate("document.body.dataset.state") == "ready"
    # Chromium names a redirect's target as a request of its own before the policy blocks it (the
    # sentence above comes from the policy's event; the context's route would abort it too)
    assert offsite == (["http://example.com/v1/chat/completions"] if model == "redirect" else [])
    offsite.clear()


def test_a_slow_model_can_be_stopped(page, fake):
    at(page, "size=24")
    open_panel(page, fake.endpoint, model="slow")
    before = len(fake.chats())
    page.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_function("() => !document.getElementById('ask-stop').disabled")
    for _ in range(100):  # the request has reached the server
        if len(fake.chats()) > before:
            break
        page.wait_for_timeout(50)
    page.get_by_role("button", name="Stop").click()
    page.wait_for_function("() => !document.getElementById('ask-run').disabled", timeout=3_000)
    card = page.locator(f'{CARDS}[data-key*=",24,"]')
    assert card.get_attribute("data-state") == "stopped"
    assert card.locator(".ask-note").inner_text() == "Stopped after 0 of 3 samples."
    assert page.locator("#ask-status").inner_text() == "Stopped." and len(fake.chats()) == before + 1


def test_a_question_set_is_asked_at_two_settings_in_a_table(page, fake):
    request = at(page, "size=24").evaluate("window.ragsim.request()")
    doc, text = request["documents"][0]["id"], request["documents"][0]["text"]
    rows = [["hourly", "How long do hourly snapshots last?", [[doc, text.index(ANSWER), text.index(ANSWER) + len(ANSWER)]]],
            ["restore", "What does restoring a snapshot create?", [[doc, text.index(RESTORE), text.index(RESTORE) + len(RESTORE)]]]]
    at(page, f"size=24&qs={quote(json.dumps(rows))}")
    open_panel(page, fake.endpoint, samples=2)
    page.get_by_label("Second setting: size").fill("23")
    page.get_by_label("overlap", exact=True).fill("6")
    before = len(fake.chats())
    page.get_by_role("button", name="Ask every question").click()
    page.wait_for_function("() => !document.getElementById('ask-set-run').disabled", timeout=60_000)
    assert len(fake.chats()) == before + 2 * 2 * 2  # questions x settings x samples
    table = page.locator("#ask-set-table")
    heads = [th.inner_text() for th in table.locator("thead th").all()]
    assert heads[1:] == ["Verdict at size 24 · overlap 6 · k 2 (window, words)", "The model at size 24 · overlap 6 · k 2 (window, words)",
                         "Verdict at size 23 · overlap 6 · k 2 (window, words)", "The model at size 23 · overlap 6 · k 2 (window, words)"]
    shown = {}
    for tr in table.locator("tbody tr").all():
        cells = tr.locator("td").all()
        shown[tr.get_attribute("data-question")] = [(cells[0].inner_text(), cells[1].get_attribute("data-contains")),
                                                    (cells[2].inner_text(), cells[3].get_attribute("data-contains"))]
    # What the core says each question's context holds, at each setting: the model repeats the
    # hourly answer only where its context holds it.
    expected = {}
    for qid, query, refs in rows:
        cells = []
        for size in (24, 23):
            one = {**{k: v for k, v in request.items() if k not in ("questions", "span", "fact")}, "query": query,
                   "chunking": {**request["chunking"], "size": size}}
            r = core.simulate({**one, "questions": [{"id": qid, "query": query, "references": [
                {"doc": d, "start": s, "end": e} for d, s, e in refs]}]})
            holds = qid == "hourly" and ANSWER in r["context"]
            cells.append(({"intact": "intact", "cut": "cut", "ranked_out": "ranked out"}[r["questions"][0]["verdict"]],
                          "2" if holds else "0"))
        expected[qid] = cells
    assert shown == expected and shown["hourly"] == [("intact", "2"), ("cut", "0")]


def test_an_embed_has_no_panel(page, booted_page, fake):
    before = len(fake.requests)
    embed = booted_page(f"{INDEX}#embed=1")
    assert embed.locator("#ask").is_hidden() and embed.locator("#ask-run").is_hidden()
    assert len(fake.requests) == before
