"""nbgrader configuration: the repository root is the course directory.

flashcourse's plugins: CUDA stubs in %%cuda cells when releasing, and the isolated
regrade of every check() test cell when autograding (autograder/nbgrader_plugins.py).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.converters import GenerateAssignment  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearSolutions, IgnorePattern, LimitOutput,
    SaveAutoGrades)

from autograder.nbgrader_plugins import ClearSolutionsCuda, IsolatedRegrade  # noqa: E402

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "flashcourse"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.nb.md"]

c.GenerateAssignment.preprocessors = [
    ClearSolutionsCuda if p is ClearSolutions else p
    for p in GenerateAssignment.class_traits()["preprocessors"].default()
]
# No Execute step: nbgrader would run the whole submission in this process's environment, with the
# instructor's rights. IsolatedRegrade has the judge grade every check() on the solution cells, which
# a sandboxed runner executes (autograder/runner.py, autograder/sandbox.py).
c.Autograde.autograde_preprocessors = [
    IsolatedRegrade, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]
