"""The masked-lane NaN: merging two empty states computes e^(-inf - (-inf)) = NaN."""
EXERCISE = "ch03.merge"
CELL = "merge"
PATCH = [("    if m == -math.inf:  # both parts empty: e^(-inf - (-inf)) would be NaN\n        return m, 0.0\n", "")]
LOSES = ["test_merge_hidden"]
