"""Tool discovery: which functions and classes are LLM tools, driven by rules/frameworks.yaml.

Each way of making a tool is a finder (a module of this package) that yields candidate tools;
``discover.FINDERS`` lists them in the order they run, and ``builder.ToolBuilder`` merges the
candidates into the project's tools. Helpers several finders share (``candidates``,
``declarations``, ``dispatch``, ``registration_names``, ``registration_calls``...) sit below
the finders, which import them and never each other.
"""
