"""The clients' floor: the real libraries and servers a run talks to: vector stores and chunk files,
onnxruntime's embedding model, an OpenAI-shaped endpoint, HTTP, PDFs and tiktoken's rank files. It
imports no other floor."""
