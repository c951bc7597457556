"""Layer 3: the memory pool, its markers and categories, the INDEX.md catalog and its budget, and
the bootstrap manifest. `refresh` writes INDEX.md (through `index_file`) and then the manifest
(`manifest` decides its content) for `memwarden index`, checkpoint, rotate and maintain.
"""
