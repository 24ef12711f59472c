"""Reference: merging two partial online-softmax states (Chapter 3, exercise 2)."""
import math

# %% notebook
def merge(a, b):
    """a = (m_a, d_a) and b = (m_b, d_b) describe two parts of a row; return the state of both."""
    ### BEGIN SOLUTION
    (ma, da), (mb, db) = a, b
    m = max(ma, mb)
    if m == -math.inf:  # both parts empty: e^(-inf - (-inf)) would be NaN
        return m, 0.0
    return m, da * math.exp(ma - m) + db * math.exp(mb - m)
    ### END SOLUTION
