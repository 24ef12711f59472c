"""Legitimate variant: section 5 as written, without its options: the register path pushes every value into the
lane's (m, d) with md_push (no max-then-sum), and every other row takes the two-pass loop one float at a time
(no float4 loop for long rows)."""
EXERCISE = "ch03.online_softmax_warp"
CELL = "online_softmax_warp"
PATCH = [('''        // The lane's values are all here: its max, then its sum, with no chain of rescalings.
        #pragma unroll
        for (int k = 0; k < VEC_PER_LANE; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
        if (m != -INFINITY) {  // a lane with no data keeps the empty state (-inf, 0)
            #pragma unroll
            for (int k = 0; k < VEC_PER_LANE; ++k)
                d += (__expf(v[k].x - m) + __expf(v[k].y - m)) + (__expf(v[k].z - m) + __expf(v[k].w - m));
        }
''', '''        #pragma unroll
        for (int k = 0; k < VEC_PER_LANE; ++k) {  // padding is -inf: md_push leaves the state alone
            md_push(m, d, v[k].x); md_push(m, d, v[k].y); md_push(m, d, v[k].z); md_push(m, d, v[k].w);
        }
'''), ('''    } else if ((cols & 3) == 0) {  // long rows: one pass for (m, d), one to write
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            md_push(m, d, v.x); md_push(m, d, v.y); md_push(m, d, v.z); md_push(m, d, v.w);
        }
        warp_merge_md(m, d);
        float inv = 1.f / d;
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            y4[c] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                                __expf(v.z - m) * inv, __expf(v.w - m) * inv);
        }
    } else {  // any length, one float at a time
''', '''    } else {  // every other row: pass 1 for (m, d), pass 2 writes, one float at a time
''')]
LOSES = []
