"""The masked-lane NaN in CUDA: md_merge of two empty lanes gives NaN, and so does every row shorter than 32."""
EXERCISE = "ch03.md_ops"
CELL = "md_ops"
PATCH = [("    if (mn == -INFINITY) return;   // both empty: stays (-inf, 0)\n", "")]
LOSES = ["test_md_ops", "test_md_ops_hidden", "test_online_softmax_warp", "test_online_softmax_warp_hidden",
         "test_online_softmax_warp_bandwidth", "test_online_softmax_block", "test_online_softmax_block_hidden",
         "test_online_softmax_block_bandwidth"]
