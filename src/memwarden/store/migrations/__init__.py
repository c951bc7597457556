"""The state database's schema, one `NNNN_name.sql` change at a time, each applied once and
in order by `store.state`."""
