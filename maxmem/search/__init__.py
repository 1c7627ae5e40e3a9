"""Finding memories.

`hybrid` ranks keyword and vector candidates together (Brain.search); `vectors` holds
the vectors (quantizer, in-RAM index, vec0 storage, the embeddings cache, rescoring);
`fts` is the keyword index's tokenizer and column layout; `relevance` scores a hit on
one scale for every query; `neighbours` reads a conversation memory with the turns
around it; `nlquery` answers questions asked in plain English.
"""
