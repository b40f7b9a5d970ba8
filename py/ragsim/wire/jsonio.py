"""JSON text in and out at every boundary (the worker's strings, the commands' stdin and stdout).

`loads` turns any text into a request or a `RequestError` (bad JSON, or nesting too deep for the
parser); `dumps` gives JSON that is valid UTF-8 whatever the strings hold: a lone surrogate (JSON
text may carry "\\ud800", and offsets count it as one code point) goes out as its `\\uXXXX` escape,
while every other character stays as it is.
"""

import json
import re

from ragsim.errors import RequestError

_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str):
    """The value of a JSON text; RequestError on the field `request` when it is not one."""
    try:
        return json.loads(text)
    except RecursionError:
        raise RequestError("request", "The request is nested too deeply; send a flat request object.") from None
    except (ValueError, TypeError) as e:
        raise RequestError("request", f"The request is not valid JSON ({e}).") from None


def dumps(value, **options) -> str:
    """JSON text, never NaN, with lone surrogates escaped (outside strings JSON has none, so the
    substitution only ever touches string contents)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
    if text.isascii():
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_call(function, request_json: str, *args) -> str:
    """Run `function(request, *args)` on a request given as JSON and return its answer as JSON; every
    JSON entry point (simulate, audit, equivalent code) goes through here, so bad JSON is refused
    alike everywhere and nothing but strings crosses the worker boundary (as valid UTF-8: jsonio)."""
    try:
        request = loads(request_json)
    except RequestError as e:
        answer = e.as_response()
    else:
        answer = function(request, *args)
    return dumps(answer)
