"""The Prometheus textfile that health writes for node_exporter's textfile collector.

In the order the data flows: `families` (what the families read, `MetricSources`: this run's
check results, memwarden's state, the settings, the gateway's layout; then the catalogue: every
metric with its type, help and how its samples are collected; adding a metric is adding one
`Family` there), `exposition` (the text format, written atomically). Every sample carries the
`gateway` label, so the files of several gateways on one host never collide.
"""
