"""Validation helpers shared by every module that reads request fields: one message style everywhere."""

from ragsim.errors import RequestError

_MISSING = object()


# The most characters of a value a message quotes: a wrong value may be a megabyte of anything.
SHOWN = 60


def shown(value, limit: int = SHOWN) -> str:
    """`repr(value)` for a message, cut short with "…" (a string's repr keeps a lone surrogate as its
    escape, so the excerpt is always printable)."""
    try:
        text = repr(value)
    except RecursionError:  # JSON nested deeper than repr goes (the parser reads deeper than it)
        return f"a {type(value).__name__} nested too deeply to show"
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def get_int(obj: dict, key: str, field: str, default=_MISSING, minimum: int | None = None) -> int:
    """An integer field (booleans and floats refused), with an optional default and lower bound."""
    value = obj.get(key, default)
    if value is _MISSING:
        raise RequestError(field, f"Give {field} as a whole number.")
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(field, f"{field} must be a whole number (got {shown(value)}).")
    if minimum is not None and value < minimum:
        raise RequestError(field, f"{field} must be at least {minimum} (got {value}).")
    return value


def get_number(obj: dict, key: str, field: str, default=_MISSING, minimum: float | None = None,
               maximum: float | None = None) -> float:
    """A real-number field (booleans, strings, NaN and infinities refused), within optional bounds."""
    value = obj.get(key, default)
    if value is _MISSING:
        raise RequestError(field, f"Give {field} as a number.")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (
        float("inf"),
        float("-inf"),
    ):
        raise RequestError(field, f"{field} must be a number (got {shown(value)}).")
    if minimum is not None and value < minimum:
        raise RequestError(field, f"{field} must be at least {minimum} (got {value}).")
    if maximum is not None and value > maximum:
        raise RequestError(field, f"{field} must be at most {maximum:g} (got {value:g}).")
    return float(value)


def get_bool(obj: dict, key: str, field: str, default=_MISSING) -> bool:
    value = obj.get(key, default)
    if not isinstance(value, bool):
        raise RequestError(field, f"{field} must be true or false (got {shown(value)}).")
    return value


def get_str(obj: dict, key: str, field: str, default=_MISSING) -> str:
    value = obj.get(key, default)
    if value is _MISSING:
        raise RequestError(field, f"Give {field} as text.")
    if not isinstance(value, str):
        raise RequestError(field, f"{field} must be text (got {type(value).__name__}).")
    return value


def get_choice(obj: dict, key: str, field: str, choices, default=_MISSING) -> str:
    """A string that must be one of `choices`; the error lists them."""
    value = obj.get(key, default)
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise RequestError(field, f"{field} must be one of {listed} (got {shown(value)}).")
    return value
