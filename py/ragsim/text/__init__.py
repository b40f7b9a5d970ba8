"""Layer 1, text: extents, the index of a text's words and terms, sentences, tokenizers."""
