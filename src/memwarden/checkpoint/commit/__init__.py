"""Checkpoint, stage 4: the files of a workspace staged as temp files (`staging`), then committed
durably: read positions in the state DB (`positions`, with what a rewind makes the next run
write again), the journal of renames (`journal`), a run's batches and its first and last steps
(`durable_run`)."""
