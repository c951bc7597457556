"""Checkpoint, stage 3 (pure): the values and text of the files (`values`, with the bundled
templates as Python in `bundled`) and a conversation's handoff fitted into its budget
(`handoff`)."""
