"""Q1: does every tool declare its idempotency, risk and replay policy?"""
