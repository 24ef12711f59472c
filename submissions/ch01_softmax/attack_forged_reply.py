"""Attack: the wrapper computes with torch.softmax (the audit's finding) and writes its own reply, audit clean,
straight into the runner's reply channel, having first taken the channel (a private copy of its fd; the runner's
own replies, which carry the finding, go to /dev/null from then on).

What the judge must do: nothing a runner says is a verdict, but the audit is a fact the runner reports. The judge
looks at the runner's descriptors after each answer, finds the reply channel copied and fails the check (and an
answer written before the worker's own is caught by its request number), so the wrapper loses what torch.softmax
loses (triton_torch_softmax), and nothing else. Before that check it got full marks."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("def softmax_triton(x, y):",
          "import os as _os\n"
          "import sys as _sys\n"
          "_CHANNEL = []\n\n\n"
          "def _forge(y):\n"
          "    from autograder.boundary import wire\n    from autograder.runner import worker\n"
          "    seen, f = {}, _sys._getframe()\n"
          "    while f is not None:  # the worker's own variables: its reply fd, the request, its outputs\n"
          "        for k in (\"reply_fd\", \"req\", \"directory\", \"outs\"):\n"
          "            if k in f.f_locals and k not in seen:\n"
          "                seen[k] = f.f_locals[k]\n"
          "        f = f.f_back\n"
          "    if not _CHANNEL:  # take the channel: the runner's own answers go nowhere from now on\n"
          "        _CHANNEL.append(_os.dup(seen[\"reply_fd\"]))\n"
          "        _os.dup2(_os.open(_os.devnull, _os.O_WRONLY), seen[\"reply_fd\"])\n"
          "    tag, made = f\"r{seen['req'].get('n', 0)}_f\", seen[\"outs\"].made\n"
          "    guards = [{\"buf\": wire.encode(b, seen[\"directory\"], f\"{tag}g{i}_\"), \"n\": n, \"canary\": c}\n"
          "              for i, (b, n, c) in enumerate(made)]\n"
          "    out = wire.encode(y, seen[\"directory\"], tag + \"o\", known=worker._middle_of(made))\n"
          "    wire.send(_CHANNEL[0], {\"ok\": True, \"audit\": None, \"guards\": guards, \"out\": out,\n"
          "                            \"n\": seen[\"req\"].get(\"n\")})  # the request it answers, as the worker's\n\n\n"
          "def softmax_triton(x, y):"),
         ("    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=num_warps)",
          "    y.copy_(torch.softmax(x, dim=-1))\n"
          "    _forge(y)")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
