"""Tool-schema front end: MCP ``tools/list`` results and ``Tool`` objects, OpenAI
chat-completions and Responses tool specs, Anthropic tool specs, and the agentguard
manifest (``agentguard.yaml``), read from JSON and YAML with positions."""

from agentguard.schemas.detect import ManifestEntry, SchemaIssue, SchemaTool, detect
from agentguard.schemas.merge import add_schema_tools, load_schema_files

__all__ = [
    "ManifestEntry",
    "SchemaIssue",
    "SchemaTool",
    "add_schema_tools",
    "detect",
    "load_schema_files",
]
