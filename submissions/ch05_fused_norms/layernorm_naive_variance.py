"""Variance as E[x²] - E[x]² (sums of x and x² in float32): catastrophic cancellation when the mean is large."""
EXERCISE = "ch05.layernorm_cuda"
CELL = "layernorm_cuda"
PATCH = [("""    n += 1.f;
    float delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);  // old delta times new delta: no cancellation
""", """    n += 1.f;
    mean += x;      // the sum of x
    m2 += x * x;    // the sum of x²
"""), ("""    float nt = n + nb;
    if (nt == 0.f) return;  // two empty states stay empty (no 0/0)
    float delta = meanb - mean;
    float wb = nb / nt;
    mean += delta * wb;
    m2 += m2b + delta * delta * n * wb;  // Chan et al.: M2a + M2b + delta^2 na nb / n
    n = nt;
""", """    n += nb;
    mean += meanb;
    m2 += m2b;
"""), ("""    mean = smean[0];
    float rstd = rsqrtf(sm2[0] / sn[0] + eps);""", """    mean = smean[0] / sn[0];
    float rstd = rsqrtf(sm2[0] / sn[0] - mean * mean + eps);""")]
LOSES = ["test_layernorm_cuda", "test_layernorm_cuda_hidden", "test_layernorm_cuda_bandwidth"]
