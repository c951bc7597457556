from memwarden.settings.option import Option

SECTION = "maintain"
DESCRIPTION = "Daily retention: transcripts, logs, memwarden's state, gateway config backups."

OPTIONS: list[Option] = []
