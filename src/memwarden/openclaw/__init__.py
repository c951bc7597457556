"""What memwarden knows of the OpenClaw gateway, and the only code that knows it: where it keeps
things (`paths`, `layout`, `agents`, `config_file`), its session stores and transcripts in both
storage eras (`sessions`, `transcripts`, `entries`), its bootstrap (`bootstrap`) and its WebSocket
and HTTP API (`gateway`, `http_probe`)."""
