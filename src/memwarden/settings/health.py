from memwarden.settings.option import Option

SECTION = "health"
DESCRIPTION = "Health checks of the gateway, the host and memwarden's own jobs."

OPTIONS: list[Option] = []
