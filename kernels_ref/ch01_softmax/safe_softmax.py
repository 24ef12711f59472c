"""Reference: safe softmax in NumPy (Chapter 1, exercise 1)."""
import numpy as np

# %% notebook
def safe_softmax(x):
    """Softmax along the last axis of x, safe from overflow.

    x: float32 array of shape (rows, cols), read-only. Returns a new float32 array.
    """
    ### BEGIN SOLUTION
    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)
    ### END SOLUTION
