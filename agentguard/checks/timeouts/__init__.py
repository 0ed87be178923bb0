"""Q4: does a timeout after the request was sent become SIDE_EFFECT_UNCERTAIN?"""
