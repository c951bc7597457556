"""memwarden's two gateway hooks put into the gateway and taken out again (`memwarden install
hooks` / `uninstall hooks`); the hooks themselves are the JavaScript in the top-level `hooks/`.

In the order the data flows: `shipped` (the hooks and the memwarden.json written beside them),
`plan` (where one run works, what it says), `record` (what an install did, for the uninstall),
`folders` (the hook folders in `<state>/hooks/`), `selection` (which config keys select the
hooks, pure), `json5_text` (those keys changed in the JSON5 text in place), `config` (the
config file written, backed up, diffed, restored), `install` (the steps in order).
"""
