"""Session rotation: the pure policy (which sessions to reset, and why) and the lineage record.

`policy` decides over plain rows from the gateway; `lineage` keeps what was rotated in
memwarden's state database. The job that acts on the decisions is `memwarden.jobs.rotate`.
"""
