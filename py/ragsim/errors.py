"""The one exception the core raises for a request that breaks the contract."""


class RequestError(ValueError):
    """A request field is wrong; `field` is its dotted path, `message` one sentence a person can act on."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def as_response(self) -> dict:
        return {"error": {"field": self.field, "message": self.message}}
