"""The built-in catalogues (YAML), installed as ``agentguard.catalogues``."""
