"""Attack: the %%cuda cell holds the integer kernel the grader reads, and a later Python cell rebinds
softmax_int8_cuda to a float version compiled from a string (the same kernel with its sum done by __expf). The judge
reads the cells' text: a later assignment of the name means the %%cuda cell is not what runs, so the exercise fails
with the reason (a rebinding without an assignment statement, through globals() or setattr, is an open route)."""
EXERCISE = "ch06.softmax_lowp_triton"
CELL = "softmax_lowp_triton"
PATCH = [("    softmax_lowp_kernel[(rows,)](x, scale, y, cols, BLOCK=BLOCK, num_warps=warps)\n    ### END SOLUTION",
          "    softmax_lowp_kernel[(rows,)](x, scale, y, cols, BLOCK=BLOCK, num_warps=warps)\n    ### END SOLUTION\n\n\n"
          "from course import cuda as _cuda  # noqa: E402\n"
          "softmax_int8_cuda = _cuda.compile_cuda(softmax_int8_cuda.module.source.replace(\n"
          "    's += rshift_round(exp_neg_q31(z), ACCUM_BITS);',\n"
          "    's += (long long)(__expf((float)z / 67108864.f) * 524288.f);')).softmax_int8_cuda\n")]
LOSES = ["test_softmax_int8_cuda", "test_softmax_int8_cuda_hidden"]
