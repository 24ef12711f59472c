"""Attack: print the old engine's passing result line on stdout, then exit at once (used to score 20/20)."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("def safe_softmax(x):",
          "import json, os, sys\n"
          "for _ex in ('ch01.safe_softmax', 'ch01.softmax_triton', 'ch01.softmax_cuda'):\n"
          "    print('@@flashcourse-result@@' + json.dumps({'passed': True, 'message': 'ok'}), flush=True)\n"
          "sys.__stdout__.write('@@flashcourse-result@@{\"passed\": true, \"message\": \"ok\"}\\n')\n"
          "sys.__stdout__.flush()\n"
          "os._exit(0)\n\n\n"
          "def safe_softmax(x):")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
