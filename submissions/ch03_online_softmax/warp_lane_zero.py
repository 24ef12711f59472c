"""Correct but serial: lane 0 of each warp walks the whole row (two passes) while 31 lanes idle."""
EXERCISE = "ch03.online_softmax_warp"
CELL = "online_softmax_warp"
PATCH = [("    if ((cols & 3) == 0 && cols <= 128 * VEC_PER_LANE) {  // rows start 16-byte aligned",
          "    if (false) {"),
         ("    } else if ((cols & 3) == 0) {  // long rows: one pass for (m, d), one to write", "    } else if (false) {"),
         ("        for (int c = lane; c < cols; c += 32) md_push(m, d, xr[c]);",
          "        for (int c = lane ? cols : 0; c < cols; ++c) md_push(m, d, xr[c]);"),
         ("        for (int c = lane; c < cols; c += 32) yr[c] =", "        for (int c = lane ? cols : 0; c < cols; ++c) yr[c] =")]
LOSES = ["test_online_softmax_warp_bandwidth"]
