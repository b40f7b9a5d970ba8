"""The one exception the core raises for a request that breaks the contract."""


# The longest message kept: every message quotes input through `fields.shown`, and this
# bound catches one that quotes it some other way, keeping the message's start and its advice at the end.
MAX_MESSAGE = 400


def _short(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]} \u2026 {text[-half:]}"


class RequestError(ValueError):
    """A request field is wrong; `field` is its dotted path, `message` one sentence a person can act on."""

    def __init__(self, field: str, message: str):
        field, message = _short(field, 200), _short(message, MAX_MESSAGE)
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def as_response(self) -> dict:
        return {"error": {"field": self.field, "message": self.message}}
