from memwarden.settings.option import Option

SECTION = "rotate"
DESCRIPTION = "Layer 1: reset sessions through the gateway before compaction fires."

OPTIONS: list[Option] = []
