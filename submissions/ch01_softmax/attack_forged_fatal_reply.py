"""Attack: attack_forged_reply's forgery (the channel taken, an answer written by the student's code, audit clean,
for a wrapper that computes with torch.softmax), with the forged answer also marked "fatal": a worker whose CUDA
context is lost says that, then exits, and the judge does not look at the descriptors of a runner that has left.

What the judge must do: only an answer that is both not ok and fatal skips the descriptor check (it fails its check
anyway, and retires the runner); an ok answer is checked whatever else it says, so this one loses exactly what
attack_forged_reply loses. Under the looser rule (skip any answer marked fatal) it got full marks
(tests/test_attacks.py::test_a_forged_ok_answer_marked_fatal_is_still_channel_checked)."""
from autograder.instructor.submissions import load

_forged = load("ch01_softmax", "attack_forged_reply")

EXERCISE, CELL, LOSES = _forged.EXERCISE, _forged.CELL, _forged.LOSES
_SEND = '"ok": True, "audit": None,'
assert _SEND in _forged.PATCH[0][1]
PATCH = [(_forged.PATCH[0][0], _forged.PATCH[0][1].replace(_SEND, '"ok": True, "fatal": True, "audit": None,')),
         *_forged.PATCH[1:]]
