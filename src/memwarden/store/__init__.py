"""Where memwarden keeps what it knows: one storage folder per gateway (`storage`) holding its
SQLite database (`state`, with the versioned `migrations/*.sql`)."""
