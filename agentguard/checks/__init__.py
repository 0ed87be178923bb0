"""One module per rule; :func:`agentguard.checks.base.all_rules` finds them."""
