"""The metadata string LlamaIndex's node parsers take off a chunk's size, rebuilt from a stored node.

LlamaIndex's `SentenceSplitter` and `TokenTextSplitter` split each Document "metadata aware"
(`NodeParser._parse_nodes`): of the Document's two metadata strings, `get_metadata_str(EMBED)` and
`get_metadata_str(LLM)`, the longer (in characters) is counted in tokens and taken off
`chunk_size`. Each string is `metadata_separator.join(metadata_template.format(key=, value=str(v)))`
over the metadata keys that mode does not exclude, in the metadata's order. A node keeps its
Document's metadata, excluded keys, template and separator, so the string is rebuilt from any of
its nodes (in a docstore.json, or in a vector store's `_node_content`). Pure: plain dicts only.
"""

import string

TEMPLATE, SEPARATOR = "{key}: {value}", "\n"  # LlamaIndex's defaults
MAX_TEMPLATE = 1000


def _plain_template(template: str) -> bool:
    """Whether a stored template only places `{key}` and `{value}`: a format spec or an attribute
    (`{value:>999999999}`, `{key.__class__}`) from a file is never run."""
    if len(template) > MAX_TEMPLATE:
        return False
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template)
                  if name is not None]
    except ValueError:
        return False
    return all(name in ("key", "value") and not spec and conversion is None for name, spec, conversion in fields)


def metadata_str(node) -> str | None:
    """The string LlamaIndex's node parser measured for this node's Document, or None where the
    record is no LlamaIndex node (it carries neither excluded-key list)."""
    if not isinstance(node, dict) or not isinstance(node.get("metadata"), dict):
        return None
    embed, llm = node.get("excluded_embed_metadata_keys"), node.get("excluded_llm_metadata_keys")
    if not isinstance(embed, list) or not isinstance(llm, list):
        return None
    template = node.get("metadata_template") if isinstance(node.get("metadata_template"), str) else TEMPLATE
    separator = node.get("metadata_separator", node.get("metadata_seperator", SEPARATOR))
    separator = separator if isinstance(separator, str) else SEPARATOR
    if not _plain_template(template):
        return None
    metadata = node["metadata"]

    def joined(excluded: list) -> str:
        try:
            return separator.join(template.format(key=k, value=str(v))
                                  for k, v in metadata.items() if k not in excluded)
        except (KeyError, IndexError, ValueError):  # a template of another shape: nothing to say
            return ""

    first, second = joined(embed), joined(llm)
    return first if len(first) > len(second) else second
