"""The compaction watch: what each compaction of a conversation dropped, kept and recorded.

Read in the order the data flows: `spans` (the compactions of a transcript and the entries each
one compacted), `items` (what a span holds that matters: observation-marked lines, open TODOs,
file paths), `survival` (the rule: does an item survive in the summary or the kept entries; pure),
`keep` (the lost items as a section of the day's log, written once), `ledger` (one row per
compaction in memwarden's state), `watch` (the checkpoint job's step: new compactions of every
conversation, assessed, kept and recorded, each isolated from the others).
"""
