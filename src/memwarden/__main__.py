"""`python -m memwarden`: the same program as the `memwarden` command."""

from memwarden.entry import run

run()
