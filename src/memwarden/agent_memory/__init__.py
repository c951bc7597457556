"""An agent's memory as memwarden reads it: what a conversation's text holds that must survive
(`observations`: marked lines, open tasks, file paths) and where each conversation's handoff
lives in a workspace (`handoff_files`)."""
