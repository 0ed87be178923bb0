"""Q3 and Q7: is a ledger entry written before the external call, and can the trace tell whether the same input already ran?"""
