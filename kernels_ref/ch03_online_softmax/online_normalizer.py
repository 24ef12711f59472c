"""Reference: the online normalizer as a scalar loop (Chapter 3, exercise 1).

One pass over the stream keeps (m, d): the max so far and the sum of exp(x - m) so far.
"""
import math

# %% notebook
def online_normalizer(stream):
    """Read the stream of floats once; return (m, d) with m = max and d = sum of exp(x - m)."""
    ### BEGIN SOLUTION
    m, d = -math.inf, 0.0
    for x in stream:
        if x > m:  # a new max: rescale what was summed so far, then add e^(x - x) = 1
            d = d * math.exp(m - x) + 1.0
            m = x
        elif x != -math.inf:  # -inf adds e^-inf = 0 (and -inf - (-inf) would be NaN)
            d += math.exp(x - m)
    return m, d
    ### END SOLUTION
