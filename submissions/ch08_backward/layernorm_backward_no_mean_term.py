"""LayerNorm's dx without the -mean(gamma * dy) term (RMSNorm's formula applied to the centred row): the gradient
keeps a component along the ones vector, though shifting a row does not change LayerNorm's output."""
EXERCISE = "ch08.layernorm_backward_triton"
CELL = "layernorm_backward_triton"
PATCH = [("(rstd * (gdy - c1 - xhat * c2))", "(rstd * (gdy - xhat * c2))")]
LOSES = ["test_layernorm_backward_triton", "test_layernorm_backward_triton_hidden",
         "test_layernorm_backward_triton_bandwidth"]
