"""Retries: are they bound to the tool and limited to errors that are safe to retry?"""
