"""Q8: does an eval cover 'non-idempotent tool times out and is not replayed'?"""
