"""Checkpoint, the run through the stages: a run over the agents (`job`), in worker processes
(`fanout`), one agent (`agents`), one session (`session`) through the stages (`pipeline`)."""
