import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("FLASHCOURSE_MODE", "auto")

import course  # noqa: E402,F401  (sets the mode before any Triton kernel is defined)
