"""memwarden: sidecar jobs that keep the memory of OpenClaw agents safe."""

__version__ = "0.3.0"
