"""Exercise declarations, one module per chapter."""
