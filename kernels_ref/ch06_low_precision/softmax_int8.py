"""Reference: integer (fixed-point) softmax in NumPy (Chapter 6, exercise 1). No floating point."""
import numpy as np

# %% notebook
ACCUM_BITS = 12                    # the sum is kept in Q12.19: room for 2^12 terms below 1
ONE_Q31 = 1 << 31                  # 1.0 in Q0.31 (fits int64, not int32)
TAYLOR_Q31 = (ONE_Q31, ONE_Q31, 1073741824, 357913941, 89478485)  # 1/0!, 1/1!, ..., 1/4! in Q0.31
# e^(-1/4), e^(-1/2), e^(-1), e^(-2), e^(-4), e^(-8), e^(-16) in Q0.31: the factor for bit 24 + j of R
EXP_NEG_QUARTERS = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)
NEWTON_A, NEWTON_B = 1515870810, 1010580540  # 48/17 and 32/17 in Q2.29


def rshift_round(v, n):
    """v / 2^n rounded to nearest (ties up), for int64 v and n >= 1."""
    return (v + (1 << (n - 1))) >> n


def mul_q31(a, b):
    """a · b for b in Q0.31: the result keeps a's format."""
    return rshift_round(a * b, 31)


def exp_neg_q31(z):
    """e^z in Q0.31 for z <= 0 in Q5.26 (int64 array): 2^31 - 1 where z = 0, 0 where z < -2^31."""
    ### BEGIN SOLUTION
    r = (z & ((1 << 24) - 1)) - (1 << 24)   # z mod 1/4, minus 1/4: r in [-1/4, 0)
    big = r - z                             # R = r - z: a multiple of 1/4 in [0, 32), bits 24..30
    r31 = r * 32                            # Q5.26 -> Q0.31
    h = np.full_like(z, TAYLOR_Q31[4])      # Horner: 1 + r(1 + r(1/2 + r(1/6 + r/24)))
    for c in TAYLOR_Q31[3::-1]:
        h = c + mul_q31(r31, h)
    for j, c in enumerate(EXP_NEG_QUARTERS):  # e^-R: one table factor per bit set in R
        h = np.where((big >> (24 + j)) & 1, mul_q31(h, c), h)
    h = np.where(z == 0, ONE_Q31 - 1, h)     # e^0 = 1 does not fit Q0.31
    return np.where(z < -ONE_Q31, 0, h)      # below -32: too small to matter, and not in Q5.26
    ### END SOLUTION


def reciprocal_q229(s):
    """(y, k) with 1/s ~ y / 2^(29 + k), for s > 0 (int64 array): y = 1/u in Q2.29, u = s / 2^k in [1/2, 1)."""
    ### BEGIN SOLUTION
    k = np.zeros_like(s)                    # the bit length of s, without np.log2 (floating point)
    t = s.copy()
    while (t > 0).any():
        k += t > 0
        t >>= 1
    d = (s << 31) >> k                      # the text's u = s / 2^k, in Q0.31: an exact shift
    y = NEWTON_A - mul_q31(d, NEWTON_B)     # 48/17 - 32/17 d: |1 - d y| <= 1/17
    for _ in range(3):                      # y <- y (2 - d y): the error squares each time
        y = rshift_round(y * ((2 << 29) - mul_q31(d, y)), 29)
    return y, k
    ### END SOLUTION


def softmax_int8(x, multiplier, shift):
    """Integer softmax of each row of x (int8, (rows, cols), read-only) for the input scale
    s = multiplier · 2^(shift - 57): returns int8 q = clamp(round(256 softmax(s x)) - 128, -128, 127)."""
    ### BEGIN SOLUTION
    x = x.astype(np.int64)
    diff = x - x.max(axis=-1, keepdims=True)              # in [-255, 0]
    z = rshift_round(diff * multiplier, 31 - shift)       # diff · s in Q5.26
    e = exp_neg_q31(z)                                    # Q0.31
    s = rshift_round(e, ACCUM_BITS).sum(axis=-1, keepdims=True)  # Q12.19
    y, k = reciprocal_q229(s)
    q = rshift_round(mul_q31(e, y), 2 + k) - 128          # 256 e / S, in int8 steps
    return np.clip(q, -128, 127).astype(np.int8)
    ### END SOLUTION
