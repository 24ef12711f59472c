"""Correct but serial: lane 0 of each warp walks the whole row while 31 lanes idle."""
EXERCISE = "ch03.online_softmax_warp"
CELL = "online_softmax_warp"
PATCH = [("        for (int c = lane; c < cols / 4; c += 32) {\n            float4 v = x4[c];\n            md_push",
          "        for (int c = lane ? cols : 0; c < cols / 4; ++c) {\n            float4 v = x4[c];\n            md_push"),
         ("        for (int c = lane; c < cols / 4; c += 32) {\n            float4 v = x4[c];\n            y4[c]",
          "        for (int c = lane ? cols : 0; c < cols / 4; ++c) {\n            float4 v = x4[c];\n            y4[c]"),
         ("        for (int c = lane; c < cols; c += 32) md_push(m, d, xr[c]);",
          "        for (int c = lane ? cols : 0; c < cols; ++c) md_push(m, d, xr[c]);"),
         ("        for (int c = lane; c < cols; c += 32) yr[c] =", "        for (int c = lane ? cols : 0; c < cols; ++c) yr[c] =")]
LOSES = ["test_online_softmax_warp_bandwidth"]
