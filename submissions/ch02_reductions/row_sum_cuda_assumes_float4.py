"""Always reads float4: rows whose length is not a multiple of 4 lose their tail (and misalign)."""
EXERCISE = "ch02.row_sum_cuda"
CELL = "row_sum_cuda"
PATCH = [("    if ((cols & 3) == 0) {  // every row starts 16-byte aligned: load 4 floats at a time",
          "    if (true) {")]
LOSES = ["test_row_sum_cuda", "test_row_sum_cuda_hidden", "test_row_sum_cuda_bandwidth"]
