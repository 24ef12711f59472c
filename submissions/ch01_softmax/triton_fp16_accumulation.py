"""Half precision: exponentials and their sum in fp16."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("e = tl.exp(x - tl.max(x, axis=0))", "e = tl.exp(x - tl.max(x, axis=0)).to(tl.float16)")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
