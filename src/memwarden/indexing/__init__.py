"""Layer 4, pure parts: the memory pool, its markers and categories, the INDEX.md catalog and its
budget, the bootstrap manifest, and LLM-free session summaries. `memwarden.jobs.index` and
`memwarden.jobs.summarize` do the I/O around them.
"""
