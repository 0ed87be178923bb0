"""Q6: does the observation tell the model whether it may retry?"""
