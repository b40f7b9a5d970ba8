""""Equivalent code" for a reranker of the user's own (`retrieval.rerank`, rank.reranking): the
retriever's first `depth` chunks sent to its `/rerank` endpoint (the shape TEI, Jina, Cohere and vLLM
share: `{"model", "query", "documents", "top_n"}` -> `{"results": [{"index", "relevance_score"}]}`)
and put in the order of its scores, ties by their place before, before k is taken.

No packaged LangChain class posts to any /rerank endpoint: langchain-community's JinaRerank has Jina's
URL fixed, and CohereRerank's cohere client appends /v1/rerank or /v2/rerank to its base_url (vLLM
serves those, TEI and a bare /rerank do not). So the code defines the few lines of a document
compressor that posts to the endpoint with `requests` and runs it in a ContextualCompressionRetriever,
as a pipeline does over its vector store; after a LlamaIndex splitter the same reranker is a node
postprocessor (LlamaIndex's JinaRerank takes a base_url, named in the code, but keeps the server's
order of the results, where ragsim breaks equal scores by the retriever's order).
`codegen` asks the retriever's lines for max(k, depth) chunks in `top` and appends these.
"""

from ragsim.rank.reranking import Options

REQUEST = [
    "        # (Hugging Face TEI's own form: {\"query\", \"texts\"} -> a bare list [{\"index\", \"score\"}])",
    "        reply = requests.post(self.url, json={\"model\": self.model, \"query\": query, \"documents\": texts,",
    "                                              \"top_n\": len(texts)}, timeout=120)",
    "        reply.raise_for_status()  # a hosted reranker: pass headers={\"Authorization\": f\"Bearer {key}\"}",
    "        scores = {r[\"index\"]: r[\"relevance_score\"] for r in reply.json()[\"results\"]}",
    "        order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))  # ties keep the retriever's order",
]


def rerank_url(endpoint: str | None) -> str:
    """`{endpoint}/rerank`, as the command line's client asks it (an endpoint ending in /rerank as it is)."""
    endpoint = (endpoint or "http://localhost:8080").strip().rstrip("/")
    return endpoint if endpoint.endswith("/rerank") else endpoint + "/rerank"


def _langchain_lines(options: Options, query: str, k: int) -> list[str]:
    url, depth = rerank_url(options.endpoint), options.depth
    return [
        "import requests",
        "from langchain_classic.retrievers import ContextualCompressionRetriever",
        "from langchain_core.documents import BaseDocumentCompressor, Document",
        "from langchain_core.runnables import RunnableLambda",
        "",
        "",
        "class YourReranker(BaseDocumentCompressor):",
        "    \"\"\"Your reranker's /rerank endpoint: the documents best first, top_n of them.\"\"\"",
        "",
        "    url: str",
        "    model: str",
        "    top_n: int",
        "",
        "    def compress_documents(self, documents, query, callbacks=None):",
        "        texts = [d.page_content for d in documents]",
        *REQUEST,
        "        return [documents[i] for i in order[: self.top_n]]",
        "",
        "",
        f"# The retriever's first {depth} chunks reranked, k kept. In your pipeline the base retriever is your",
        f"# store's, vector_store.as_retriever(search_kwargs={{\"k\": {depth}}}); before LangChain 1.0 the",
        "# retriever class is imported from langchain.retrievers.",
        "reranking = ContextualCompressionRetriever(",
        f"    base_compressor=YourReranker(url={url!r}, model={options.model!r}, top_n={k}),",
        f"    base_retriever=RunnableLambda(lambda q: [Document(chunks[i], metadata={{\"chunk\": i}}) for i in top[:{depth}]]),",
        ")",
        f"top = ([d.metadata[\"chunk\"] for d in reranking.invoke({query!r})] + top[{depth}:])[:{k}]",
    ]


def _llamaindex_lines(options: Options, query: str, k: int) -> list[str]:
    url, depth = rerank_url(options.endpoint), options.depth
    base = url[: -len("/rerank")]
    return [
        "import requests",
        "from llama_index.core.postprocessor.types import BaseNodePostprocessor",
        "from llama_index.core.schema import NodeWithScore, TextNode",
        "",
        "",
        "class YourReranker(BaseNodePostprocessor):",
        "    \"\"\"Your reranker's /rerank endpoint: the nodes best first, top_n of them. (JinaRerank(base_url=",
        f"    {base!r}, model=..., top_n=...) of llama-index-postprocessor-jinaai-rerank posts the same",
        "    shape, keeping the server's order of the results.)\"\"\"",
        "",
        "    url: str",
        "    model: str",
        "    top_n: int",
        "",
        "    def _postprocess_nodes(self, nodes, query_bundle=None):",
        "        query = query_bundle.query_str",
        "        texts = [n.node.get_content() for n in nodes]",
        *REQUEST,
        "        return [NodeWithScore(node=nodes[i].node, score=scores[i]) for i in order[: self.top_n]]",
        "",
        "",
        f"# The retriever's first {depth} chunks reranked, k kept. In your pipeline: index.as_query_engine(",
        f"#     similarity_top_k={depth}, node_postprocessors=[reranker])",
        f"reranker = YourReranker(url={url!r}, model={options.model!r}, top_n={k})",
        f"retrieved = [NodeWithScore(node=TextNode(text=chunks[i], id_=str(i))) for i in top[:{depth}]]",
        f"reranked = reranker.postprocess_nodes(retrieved, query_str={query!r})",
        f"top = ([int(n.node.node_id) for n in reranked] + top[{depth}:])[:{k}]",
    ]


def rerank_lines(options: Options, chunking: dict, query: str, k: int) -> list[str]:
    """Lines that leave the top k after the reranker in `top`, from the retriever's max(k, depth) in
    `top`: LlamaIndex's postprocessor after a LlamaIndex splitter, else LangChain's compressor."""
    llamaindex = str(chunking.get("strategy", "")).startswith("llamaindex")
    return ["", *(_llamaindex_lines if llamaindex else _langchain_lines)(options, query, k)]
