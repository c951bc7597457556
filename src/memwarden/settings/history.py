from memwarden.settings.option import Option

SECTION = "history"
DESCRIPTION = "Snapshots of each agent's memory/ folder, for history and rewind."

OPTIONS: list[Option] = []
