"""Updates the max before computing the rescale factor: alpha = e^(m_new - m_new) = 1, nothing is rescaled."""
EXERCISE = "ch04.flash_attention_cuda"
CELL = "flash_attention_cuda"
PATCH = [("""        float m_new = fmaxf(m, s);
        float alpha = __expf(m - m_new);  // first key: e^(-inf) = 0 (m_new is finite)
""", """        float m_new = fmaxf(m, s);
        m = m_new;
        float alpha = __expf(m - m_new);
""")]
LOSES = ["test_flash_attention_cuda", "test_flash_attention_cuda_hidden"]
