"""Checkpoint, stage 2 (pure): secrets masked (`secret_rules`, `redact`), the
messages kept (`extract`), what a conversation held since it began (`conversation`) and the
daily log's entries (`daily_log`)."""
