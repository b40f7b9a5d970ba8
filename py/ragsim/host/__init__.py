"""Host modules: I/O and real libraries (command lines, onnxruntime, files), outside the pure core.

Importing this package registers CPython's hosts with the core: tiktoken's rank files read from
disk (`tokens_files`) and the all-MiniLM-L6-v2 model through onnxruntime (`embed_onnx`, loaded on
first use), for dense retrieval and for the semantic chunkers. `python -m ragsim` imports it; so must any other CPython caller that wants them.
"""

from ragsim.host import embed_onnx, tokens_files
from ragsim.rank import dense
from ragsim.split import semantic_split
from ragsim.text import tokens

# looked up at each call, so a test (or a caller) may replace either function on its module
tokens.add_finder(lambda name: tokens_files.find_rank_file(name), lambda name: tokens_files.missing_message(name))
dense.register_host(lambda: embed_onnx.default_embedder())
# the semantic chunkers' sentence windows (SPEC section 12): the same model, embedded in batches
semantic_split.register_host(lambda: embed_onnx.default_embedder())
