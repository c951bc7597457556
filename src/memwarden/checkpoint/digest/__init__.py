"""Checkpoint, stage 2 (pure): secrets masked (`timed_pattern`, `secret_rules`, `redact`), the
messages kept (`extract`), what a conversation held since it began (`conversation`) and the
daily log's entries (`daily_log`)."""
