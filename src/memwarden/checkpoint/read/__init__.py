"""Checkpoint, stage 1: which agents changed (`unchanged`), which sessions a run reads
(`select`), and their new lines (`reader`), taken into what each conversation holds (`gather`)."""
