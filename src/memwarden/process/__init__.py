"""What a job's process is made of: its context (`runtime`), its errors and exit codes
(`errors`), its stderr lines (`log_format`), the times and sizes it writes for people
(`readable`), its locks (`locks`), its stop request (`stopping`), deadlines on blocking calls
(`deadline`) and the CPUs it may use (`cpus`)."""
