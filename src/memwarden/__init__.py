"""memwarden: sidecar jobs that keep the memory of OpenClaw agents safe."""

from memwarden import dataclass_code

__version__ = "0.3.0"

dataclass_code.install()  # before any of memwarden's modules makes a dataclass
