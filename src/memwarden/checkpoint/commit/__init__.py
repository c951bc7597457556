"""Checkpoint, stage 4: where files go in a workspace (`writer`), staged as temp files
(`staging`), then committed durably: read positions in the state DB (`positions`), the journal
of renames (`journal`), the whole batch (`batch`), a run's first and last steps
(`durable_run`); after it, history snapshots (`snapshots`) and what a rewind makes the next run
write again (`rewound`)."""
