"""Q2: do write tools carry an idempotency key built by the runtime?"""
