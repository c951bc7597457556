from memwarden.settings.option import Option

SECTION = "index"
DESCRIPTION = "Layer 4: memory/INDEX.md catalogs and what the bootstrap hook injects."

OPTIONS: list[Option] = []
