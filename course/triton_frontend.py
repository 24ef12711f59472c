"""CPU mode: Triton's GPU front end checks every kernel launch before the interpreter runs it.

The Triton interpreter (TRITON_INTERPRET=1) runs a kernel as Python, so it accepts code that the GPU
compiler rejects: a kernel that reads a plain Python global (`SCALE = 0.5`, not
`SCALE = tl.constexpr(0.5)`), `tl.arange` with a bound that is not a `tl.constexpr`, a non-power-of-2
`tl.arange`, a type mismatch in a loop-carried value, an unknown launch option... Each of these passes every
CPU check and then fails on the first GPU launch.

So in CPU mode each launch first goes through the same steps a GPU launch takes before any code is generated
for the device, using Triton's own code for each (no re-implementation of its rules):

* the binder and `JITFunction._pack_args` (argument types and specialisation, launch options; an unknown
  keyword argument is a KeyError there, as on a GPU, where the interpreter silently drops it);
* `JITCallable.cache_key` (Triton's scan of the globals and functions the kernel uses);
* `ASTSource.make_ir`, i.e. `ast_to_ttir`: the whole front end (Python AST -> TTIR, with the semantic checks of
  `triton.language`), for an sm_90 target (`GPUTarget("cuda", 90, 32)`, an H100/H200). None of it needs a GPU
  or a driver.

A kernel the front end rejects raises the very exception a GPU launch raises (usually a
`triton.compiler.errors.CompilationError` with the same text), with a note saying it was found in CPU mode.
Checks that pass are remembered per specialisation, as a GPU caches its compiled kernels, so a kernel is
checked once per new combination of argument types and constexpr values (tens of milliseconds).

Not covered: anything after TTIR (the TTGIR/LLVM/PTX passes, ptxas, the shared-memory limit checked when a
compiled kernel is loaded) and Gluon kernels (`gluon.jit` does not run in the interpreter).

`install()` wraps `InterpretedFunction.run`; `course.mode` calls it in CPU mode (at once if triton is already
imported, else when `triton.runtime.interpreter` is first imported). FLASHCOURSE_GPU_FRONTEND=0 turns it off.
"""
from __future__ import annotations

import os
import sys
import types
import weakref

NOTE = ("flashcourse: found in CPU mode by Triton's GPU compiler front end (run here for sm_90 without a GPU). "
        "The Triton interpreter would have run this kernel; a GPU will not compile it.")

_state: dict = {}  # "backend", "target": created on first use
_jit_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # InterpretedFunction -> its JITFunction twin
_passed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # InterpretedFunction -> set of passed keys


def enabled() -> bool:
    return os.environ.get("FLASHCOURSE_GPU_FRONTEND", "1").strip().lower() not in ("0", "false", "no", "off")


def _target_and_backend():
    if not _state:
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend

        target = GPUTarget("cuda", 90, 32)
        _state["target"], _state["backend"] = target, make_backend(target)
    return _state["target"], _state["backend"]


def _as_jit(value):
    """The JITFunction a GPU would have for an interpreter-mode @triton.jit function; anything else unchanged."""
    from triton.runtime.interpreter import InterpretedFunction

    if isinstance(value, InterpretedFunction):
        twin = _jit_of.get(value)
        if twin is None:
            try:
                twin = _twin_class()(value)
            except Exception:  # noqa: BLE001  (e.g. no source: left as it is, for Triton to judge)
                return value
            _jit_of[value] = twin
        return twin
    return value


class _Globals(dict):
    """A live view of a function's module globals in which @triton.jit functions appear as JITFunctions (Triton
    reads globals only through get, [], `in` and items)."""

    def __init__(self, base: dict):
        super().__init__()
        self._base = base

    def get(self, key, default=None):
        return _as_jit(self._base[key]) if key in self._base else default

    def __getitem__(self, key):
        return _as_jit(self._base[key])

    def __contains__(self, key):
        return key in self._base

    def items(self):
        return [(k, _as_jit(v)) for k, v in list(self._base.items())]


_TWIN: list = []


def _twin_class():
    if _TWIN:
        return _TWIN[0]
    from triton.runtime.jit import JITFunction

    class GPUTwin(JITFunction):
        """A JITFunction (what @triton.jit gives on a GPU) for a function that was defined in interpreter mode."""

        def __init__(self, interpreted):
            fn = interpreted.fn
            if fn.__closure__:  # closure cells holding @triton.jit functions: their JITFunction twins instead
                cells = []
                for cell in fn.__closure__:
                    try:
                        cells.append(types.CellType(_as_jit(cell.cell_contents)))
                    except ValueError:  # an empty cell
                        cells.append(cell)
                twin_fn = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells))
                twin_fn.__kwdefaults__ = fn.__kwdefaults__
                twin_fn.__annotations__ = fn.__annotations__
                twin_fn.__qualname__ = fn.__qualname__
                twin_fn.__module__ = fn.__module__
                twin_fn.__doc__ = fn.__doc__
                fn = twin_fn
            kwargs = {k: v for k, v in interpreted.kwargs.items()
                      if k in ("version", "do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline",
                               "repr", "launch_metadata")}
            super().__init__(fn, **kwargs)
            self.__globals__ = _Globals(fn.__globals__)

        def get_capture_scope(self):
            scope = dict(self.__globals__.items())
            fn = self.fn
            if fn.__closure__ is not None:
                for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                    try:
                        scope[name] = cell.cell_contents
                    except ValueError:
                        pass
            return scope

    _TWIN.append(GPUTwin)
    return GPUTwin


def check_launch(kernel, args, kwargs) -> None:
    """Run Triton's GPU front end (sm_90) on this launch of an interpreter-mode kernel; raise what a GPU launch
    would raise (with NOTE added), or return None. `kernel` is a @triton.jit function defined in interpreter
    mode; args and kwargs are the launch's (grid excluded)."""
    from triton import knobs

    twin = _as_jit(kernel)
    if twin is kernel:  # not an interpreter-mode @triton.jit function
        return
    target, backend = _target_and_backend()
    kwargs = {k: _as_jit(v) for k, v in kwargs.items()}
    args = [_as_jit(a) for a in args]
    # As JITFunction.run does before it binds the arguments:
    kwargs["debug"] = kwargs.get("debug", twin.debug) or knobs.runtime.debug
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    was_interpreting = knobs.runtime.interpret
    restore = _gpu_language()
    knobs.runtime.interpret = False  # e.g. constexpr_function returns constexprs to the code generator only then
    try:
        binder = getattr(twin, "_flashcourse_binder", None)
        if binder is None:
            from triton.runtime.jit import create_function_from_signature

            binder = twin._flashcourse_binder = create_function_from_signature(twin.signature, twin.params, backend)
        bound_args, specialization, options = binder(*args, **kwargs)
        key = str(specialization) + str(options)
        passed = _passed.setdefault(kernel, set())
        if key in passed:
            return
        _front_end(twin, target, backend, kwargs, bound_args, specialization, options)
        passed.add(key)
    except Exception as e:
        if hasattr(e, "add_note") and NOTE not in getattr(e, "__notes__", ()):
            e.add_note(NOTE)
        raise
    finally:
        knobs.runtime.interpret = was_interpreting
        _restore(restore)


_MISSING = object()
_pristine: dict = {}  # id(module or class of triton.language) -> (it, its attributes when first seen)


def _language_objects() -> list:
    """The modules of triton.language and the classes defined there (what the interpreter patches lives there)."""
    objs = {}
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == "triton.language" or mod_name.startswith("triton.language.")):
            continue
        objs[id(mod)] = mod
        for value in list(vars(mod).values()):
            if isinstance(value, type) and getattr(value, "__module__", "").startswith("triton.language"):
                objs[id(value)] = value
    return list(objs.values())


def _from_interpreter(value) -> bool:
    """Whether value is one of the interpreter's replacements for a triton.language attribute."""
    if value is print:  # tl.static_print
        return True
    inner = getattr(value, "fget", None) or getattr(value, "func", None) or value  # a property, a partial
    return getattr(inner, "__module__", None) == "triton.runtime.interpreter"


def _gpu_value(obj, value):
    """What a GPU-mode Triton has where interpreter mode has value (an attribute of obj)."""
    from triton.runtime.interpreter import InterpretedFunction

    while _from_interpreter(value) and isinstance(getattr(value, "__kwdefaults__", None), dict) \
            and "member" in value.__kwdefaults__:  # a builtin wrapped by the interpreter (_patch_attr)
        value = value.__kwdefaults__["member"]
    if isinstance(value, InterpretedFunction):  # tl.sum, tl.max, tl.cdiv... (@jit functions of triton.language)
        return _as_jit(value)
    if isinstance(obj, type) and callable(value) and getattr(value, "__name__", "") == "wrapper":
        for cell in getattr(value, "__closure__", None) or ():  # x.sum(): a method forwarding to an @jit function
            try:
                inner = cell.cell_contents
            except ValueError:
                continue
            if isinstance(inner, InterpretedFunction):
                return _as_jit(inner)
    return value


def _gpu_language() -> list:
    """Make triton.language look as it does on a GPU, for the duration of one check, and return what to restore.
    In interpreter mode its @jit functions (tl.sum, tl.max, tl.cdiv...) are InterpretedFunctions and the tensor
    methods forwarding to them are plain wrappers: both become their JITFunction twins. And an interpreted launch
    may leave some of the interpreter's replacements of builtins in place (a call of an @jit function of
    triton.language patches the modules in its globals and does not restore them): those are put back as they were
    when first seen (at the first check, before any launch ran)."""
    try:  # imported by Triton's argument specialisation; its import asserts interpreter mode when tl's are interpreted
        import triton.experimental.gluon  # noqa: F401
    except Exception:  # noqa: BLE001
        pass
    changes = []
    for obj in _language_objects():
        current = dict(vars(obj))
        if id(obj) not in _pristine:
            _pristine[id(obj)] = (obj, current)
        first = _pristine[id(obj)][1]
        for name in set(current) | set(first):
            have = current.get(name, _MISSING)
            want = have
            if have is _MISSING or _from_interpreter(have):
                want = first.get(name, _MISSING)
            if want is not _MISSING:
                want = _gpu_value(obj, want)
            if want is have:
                continue
            changes.append((obj, name, have))
            if want is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, want)
    return changes


def _restore(changes) -> None:
    for obj, name, value in reversed(changes):
        if value is _MISSING:
            if name in vars(obj):
                delattr(obj, name)
        else:
            setattr(obj, name, value)


def _front_end(twin, target, backend, kwargs, bound_args, specialization, options):
    """triton.compiler.compile's steps up to TTIR, for the launch JITFunction.run would compile."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import ASTSource, filter_traceback

    options, signature, constexprs, attrs = twin._pack_args(backend, kwargs, bound_args, specialization, options)
    src = ASTSource(twin, signature, constexprs, attrs)
    src.hash()  # the cache key: twin.cache_key, Triton's scan of what the kernel references
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)
    except Exception as e:
        filter_traceback(e)
        raise


def _wrap_run(interpreter_module) -> None:
    cls = interpreter_module.InterpretedFunction
    if getattr(cls.run, "_flashcourse_frontend", False):
        return
    original = cls.run

    def run(self, *args, grid, warmup, **kwargs):
        if enabled():
            check_launch(self, args, kwargs)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    run._flashcourse_frontend = True
    run.__wrapped__ = original
    run.__doc__ = original.__doc__
    cls.run = run


class _OnImport:
    """A meta-path finder that wraps InterpretedFunction.run as soon as triton.runtime.interpreter is imported
    (so that importing `course` does not import triton)."""

    NAME = "triton.runtime.interpreter"

    def find_spec(self, name, path=None, target=None):
        if name != self.NAME:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _wrap_run(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Check every interpreter launch with the GPU front end (idempotent)."""
    mod = sys.modules.get(_OnImport.NAME)
    if mod is not None:
        _wrap_run(mod)
    elif not any(isinstance(f, _OnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _OnImport())
