"""nbgrader configuration: the repository root is the course directory.

flashcourse's plugins: CUDA stubs in %%cuda cells when releasing, and the isolated
regrade of every check() test cell when autograding, and a readable feedback page for
`nbgrader generate_feedback` (autograder/nbgrader/plugins.py, autograder/nbgrader/templates/).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.converters import GenerateAssignment  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearSolutions, GetGrades, IgnorePattern, LimitOutput,
    SaveAutoGrades)

from autograder.nbgrader.plugins import (  # noqa: E402
    ClearSolutionsCuda, FeedbackExporter, FeedbackPage, IsolatedRegrade)

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "flashcourse"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.nb.md"]

c.GenerateAssignment.preprocessors = [
    ClearSolutionsCuda if p is ClearSolutions else p
    for p in GenerateAssignment.class_traits()["preprocessors"].default()
]
# No Execute step: nbgrader would run the whole submission in this process's environment, with the
# instructor's rights. IsolatedRegrade has the judge grade every check() on the solution cells, which
# a sandboxed runner executes (autograder/judge/session.py, autograder/boundary/sandbox.py).
c.Autograde.autograde_preprocessors = [
    IsolatedRegrade, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]
# nbgrader's own feedback page (generate_feedback, and formgrader's button): every graded cell named, long messages
# wrapped, MathJax from a copy in feedback/.mathjax (not a CDN), the chapter's pictures embedded. nbgrader's scores,
# comments and late penalty stay (the template extends nbgrader's). Only this exporter changes: the formgrader's
# HTMLExporter is left alone.
c.GenerateFeedback.exporter_class = FeedbackExporter
c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, FeedbackPage]
