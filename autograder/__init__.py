"""flashcourse grading engine: one registry of exercises, each check in its own process."""
from autograder.notebook import check  # noqa: F401

__all__ = ["check"]
