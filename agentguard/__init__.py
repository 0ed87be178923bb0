"""agentguard: make LLM-agent tool calls replay-safe."""

__version__ = "0.1.0"
