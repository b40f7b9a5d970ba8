"""Layer 5, wire: the request, the response, the JSON boundary, equivalent code."""
