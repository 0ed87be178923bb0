"""Q5: can recovery or resume replay the last write?"""
