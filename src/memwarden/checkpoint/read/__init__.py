"""Checkpoint, stage 1: which agents and sessions have something new (`unchanged`, `select`),
and their new lines (`reader`), taken into what each conversation holds (`gather`)."""
