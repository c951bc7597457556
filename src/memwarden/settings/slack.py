from memwarden.settings.option import Option

SECTION = "slack"
DESCRIPTION = "Where health alerts go (Slack Web API or incoming webhook)."

OPTIONS: list[Option] = []
