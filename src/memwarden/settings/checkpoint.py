from memwarden.settings.option import Option

SECTION = "checkpoint"
DESCRIPTION = (
    "Layer 2: ACTIVE_CONTEXT.md and daily logs written from live transcripts, with no LLM."
)

OPTIONS: list[Option] = []
