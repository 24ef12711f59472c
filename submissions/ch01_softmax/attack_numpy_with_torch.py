"""Attack: answer the NumPy exercise with torch.softmax (or SciPy's softmax), by any route a solution cell has:
a plain import; torch already in memory (sys.modules); the site-packages directory found from numpy's own path, or
any Python's on the machine, put on sys.path; torch's __init__ loaded from its file; libtorch opened with ctypes.
The NumPy/Python exercise's runner never imported torch and its file system holds no package but NumPy, so every
route fails and the exercise's checks are lost (with its runner, NUMPY_RUNNERS off, this got full marks)."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n"
          "    e = np.exp(x - m)\n"
          "    return e / e.sum(axis=-1, keepdims=True)\n",
          "    import glob, importlib, os, sys\n"
          "    torch = sys.modules.get('torch')\n"
          "    if torch is None:\n"
          "        here = os.path.dirname(os.path.dirname(np.__file__))  # numpy's site-packages\n"
          "        places = [here] + glob.glob('/usr/lib/python3*/*-packages') + glob.glob('/usr/local/lib/python3*/*-packages') \\\n"
          "            + glob.glob(sys.base_prefix + '/lib/python3*/site-packages') + glob.glob('/root/.pyenv/versions/*/lib/python3*/site-packages')\n"
          "        for d in places:\n"
          "            if os.path.isdir(os.path.join(d, 'torch')) and d not in sys.path:\n"
          "                sys.path.append(d)\n"
          "        importlib.invalidate_caches()\n"
          "        try:\n"
          "            import torch\n"
          "        except ImportError:\n"
          "            torch = None\n"
          "    if torch is not None:\n"
          "        return torch.softmax(torch.from_numpy(np.array(x)), dim=-1).numpy()\n"
          "    try:\n"
          "        from scipy.special import softmax\n"
          "        return softmax(x, axis=-1).astype(np.float32)\n"
          "    except ImportError:\n"
          "        pass\n"
          "    import ctypes\n"
          "    for lib in glob.glob(os.path.join(here, 'torch', 'lib', 'libtorch*.so')):\n"
          "        ctypes.CDLL(lib)  # reachable: a library of torch's could compute here\n"
          "        raise RuntimeError('libtorch was loadable: ' + lib)\n"
          "    import torch  # noqa: F811  (nothing found: fails as the plain import does)\n")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
