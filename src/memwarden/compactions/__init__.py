"""The compaction watch: what each compaction of a conversation dropped, kept and recorded.

Read in the order the data flows: `assessment` (pure: the compactions of a transcript and the
entries each one compacted, what a span holds that matters, whether each item survives in the
summary or the kept entries, and the grade), `ledger` (one row per compaction in memwarden's
state), `watch` (the checkpoint job's step: new compactions of every conversation, assessed,
their lost items kept as a section of the day's log, written once, and recorded, each isolated
from the others).
"""
