"""The worker in real Chromium, served from the built dist/: it boots from its own origin only, and
what it answers through the latest-wins gate is what CPython's core answers.

Driven through tests/browser/fixtures/worker.html, which starts the worker with assets/js/worker-client.js the
way the page does and exposes `window.harness = {build, gate, stages}`."""

import json
import sys

import pytest
from pydoc_data.topics import topics

from helpers import make_request
from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

HARNESS = "__tests__/worker.html"


@pytest.fixture(scope="module")
def harness(booted_page):
    return booted_page(HARNESS)


def call(page, script, arg=None):
    """Await `script` (an expression over `gate`, `harness` and `arg`) in the harness page."""
    return page.evaluate(f"async (arg) => {{ const {{gate}} = window.harness, harness = window.harness; "
                         f"return await ({script}); }}", arg)


def real_request(**changes):
    text = topics["with"]
    start = text.index("The execution of the")
    end = text.index(".", start) + 1
    request = make_request(text, query="when is __exit__ called", size=40, overlap=10, k=3, span=(start, end))
    request.update(changes)
    return request


def test_worker_boots_from_its_own_origin_only(harness, offsite, page_errors):
    stages = call(harness, "harness.stages")
    # a fresh browser: from the files, the runtime's load in its steps (its files, its WebAssembly compiled)
    assert [s for s in stages if not s.startswith("runtime-")] == ["runtime", "core", "ready"], stages
    assert {"runtime-script", "runtime-wasm"} <= set(stages), stages
    assert call(harness, "gate.stage") == "ready"
    assert offsite == []
    assert page_errors == []


def test_round_trip_equals_cpython(harness):
    request = real_request()
    reply = call(harness, "gate.submit(arg)", json.dumps(request))
    assert reply["ok"] is True, reply
    assert isinstance(reply["result"], str)
    assert 0 <= reply["ms"] < 60_000
    expected = api.simulate(request)
    assert expected["verdict"]["kind"] is not None
    assert json.loads(reply["result"]) == expected


def test_gate_accepts_a_request_object_too(harness):
    request = real_request(query="context manager __enter__")
    reply = call(harness, "gate.submit(arg)", request)
    assert json.loads(reply["result"]) == api.simulate(request)


def test_refused_request_names_the_field(harness):
    request = real_request(chunking={"unit": "words", "size": 10, "overlap": 10})
    reply = call(harness, "gate.submit(arg)", json.dumps(request))
    assert reply["ok"] is False
    assert reply["error"] == api.simulate(request)["error"]
    assert reply["error"]["field"] == "chunking.overlap"


def test_unknown_message_type_gets_an_error_reply(harness):
    reply = call(harness, "gate.send({type: 'frobnicate'})")
    assert reply["ok"] is False
    assert reply["error"]["field"] == "type"
    assert "frobnicate" in reply["error"]["message"] and "simulate" in reply["error"]["message"]


def test_latest_wins_keeps_one_in_flight_and_one_queued(harness):
    requests = [json.dumps(real_request(retrieval={"k": k})) for k in range(1, 6)]
    replies = call(harness, "Promise.all(arg.map((r) => gate.submit(r)))", requests)
    # The first is sent at once; each newer submit displaced the queued one; the last one ran.
    assert [r.get("dropped", False) for r in replies] == [False, True, True, True, False]
    assert json.loads(replies[0]["result"])["stats"]["retrieved"] == 1
    assert json.loads(replies[4]["result"])["stats"]["retrieved"] == 5


def test_python_exception_reaches_the_page_as_one_line(harness, page_errors):
    # An overflowing price makes the core produce a non-JSON number. Whatever the core does with
    # it, the page gets CPython's answer or a one-line internal error, never a traceback.
    request = real_request(price_per_million=1e308)
    reply = call(harness, "gate.submit(arg)", json.dumps(request))
    try:
        expected = api.simulate_json(json.dumps(request))
    except Exception as exc:  # noqa: BLE001 - the point is what any exception becomes
        assert reply["ok"] is False
        # Pyodide's Python (3.14) may word the message differently; the type and the shape are fixed.
        assert reply["error"]["field"] == ""
        assert reply["error"]["message"].startswith(f"Internal error: {type(exc).__name__}: ")
        assert "\n" not in reply["error"]["message"]
        assert any("Traceback" in line for line in page_errors)  # logged for developers
        page_errors.clear()
    else:
        assert json.loads(reply["result"] if reply["ok"] else json.dumps({"error": reply["error"]})) \
            == json.loads(expected)
    assert call(harness, "gate.stage") == "ready"  # the worker lives on


def test_deeply_nested_request_is_refused_before_python_sees_it(harness):
    deep = "[" * 5000 + "]" * 5000
    reply = call(harness, "gate.submit(arg)", deep)
    assert reply["ok"] is False and reply["error"]["field"] == "request"
    assert "nested too deeply" in reply["error"]["message"]
    # brackets inside strings do not count, and the worker still answers
    request = real_request(query="[" * 200)
    reply = call(harness, "gate.submit(arg)", json.dumps(request))
    assert json.loads(reply["result"]) == api.simulate(request)
    assert call(harness, "gate.stage") == "ready"


def test_audit_and_code_messages_answer_like_cpython(harness):
    from ragsim.wire import audit

    request = {"documents": [{"id": "a", "text": "The Galle Ring orbits at 42,000 km. Kestrel Station has 14 crew."}],
               "chunking": {"unit": "chars", "size": 40}, "overlaps": [0, 30]}
    reply = call(harness, "gate.send({type: 'call', fn: 'audit', request: arg})", json.dumps(request))
    assert reply["ok"] is True, reply
    assert json.loads(reply["result"]) == audit.audit(request)
    code = call(harness, "gate.send({type: 'call', fn: 'code', request: arg})", json.dumps(real_request()))
    assert code["ok"] is True and json.loads(code["result"]) == json.loads(api.equivalent_code_json(json.dumps(real_request())))
    bad = call(harness, "gate.send({type: 'call', fn: 'audit', request: arg})", json.dumps({**request, "overlaps": [-1]}))
    assert bad["ok"] is False and bad["error"]["field"] == "overlaps"


def test_stemmer_installs_on_demand_from_this_site(harness, offsite):
    reply = call(harness, "gate.send({type: 'install', package: 'snowballstemmer'})")
    assert reply["ok"] is True, reply
    assert json.loads(reply["result"]) == {"package": "snowballstemmer",
                                           "version": call(harness, "harness.build.wheels.snowballstemmer"
                                                           ".split('/').pop().split('-')[1]")}
    refused = call(harness, "gate.send({type: 'install', package: 'numpy'})")
    assert refused["ok"] is False and refused["error"]["field"] == "package"
    assert offsite == []


def test_off_origin_requests_are_blocked_and_recorded(harness, offsite):
    """The guard itself: a worker's fetch to another host is stopped and shows up in `offsite`."""
    before = len(offsite)
    outcome = call(harness, """new Promise((resolve) => {
        const source = "fetch('http://example.invalid/probe').then(() => postMessage('reached'), " +
                       "() => postMessage('blocked'))";
        const worker = new Worker(URL.createObjectURL(new Blob([source], {type: 'text/javascript'})));
        worker.onmessage = (e) => { worker.terminate(); resolve(e.data); };
    })""")
    assert outcome == "blocked"
    assert offsite[before:] == ["http://example.invalid/probe"]
    del offsite[before:]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
