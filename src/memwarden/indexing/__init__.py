"""Layer 3: the memory pool, its markers and categories, the INDEX.md catalog and its budget,
the bootstrap manifest, and LLM-free session summaries. `refresh` writes INDEX.md (through
`index_file`) and then the manifest (`manifest` decides its content) for `memwarden index`,
checkpoint, rotate and maintain; `memwarden.jobs.summarize` writes session summaries.
"""
