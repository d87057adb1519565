"""The kernels' extension module: the parser's kernels compiled ahead of time, so that a
parse starts without numba (``dispatch`` says when it is used).

It is built by numba's ahead-of-time compiler (``numba.pycc``) from the same functions,
each kernel for the signatures ``precompiled_signatures`` lists, the first time a kernel is
called on a machine: about as long as numba's own first compilation of the kernels, plus a
few seconds. It is kept beside numba's cache (``jit.cache_folder``), in a file named by a
digest of what it was built from: the kernels' sources and signatures, Python, numba,
llvmlite, numpy and the processor. It is looked for in every folder of numba's cache this
user can read (``jit.cache_folders``), so that one built into an install's ``__pycache__``
(``python -m lpcfg_cli.engine.precompiled`` when installing) serves every user, whether or
not they can write there, and is built only where none is found. It is compiled for this
processor, as numba's just-in-time code is (numba.pycc's default, a generic x86-64, leaves
out the wider vector instructions of today's processors), and ``/proc/cpuinfo`` names the
processor, so that a cache folder shared by machines with different processors (a cluster's
home folder) holds one module per processor instead of one that stops on an instruction
another lacks. Where there is no ``/proc/cpuinfo`` (not Linux), no cache folder, no C
compiler or ``LPCFG_PRECOMPILED=0``, numba compiles the kernels just in time, as it always
can. A build that failed leaves a ``.failed`` file with the compiler's output beside where
the module would be, and is not tried again for the same digest: delete it to try again.

numba marks ``numba.pycc`` as pending deprecation, its replacement not yet released; the
just-in-time path stays the one every kernel can take.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from lpcfg_cli.engine import jit
from lpcfg_cli.engine.precompiled_signatures import SIGNATURES

MODULE = "lpcfg_kernels"
# Where the kernels are defined: the digest covers their sources and those of the modules
# that decide how they are built and called.
SOURCES = (
    "engine/chart_grammars.py",
    "engine/coarse.py",
    "engine/kernels.py",
    "engine/scaling.py",
    "parsing/decoders.py",
    "engine/dispatch.py",
    "engine/precompiled.py",
    "engine/precompiled_signatures.py",
)
# The lines of /proc/cpuinfo that name a processor and its instruction set (x86 and ARM).
_CPU_FIELDS = (
    "vendor_id",
    "cpu family",
    "model",
    "model name",
    "flags",
    "CPU implementer",
    "CPU architecture",
    "CPU variant",
    "CPU part",
    "Features",
)

_UNTRIED = object()
_module: Any = _UNTRIED


# Python and numpy scalar types, by the numba type their values get (numba.typeof).
_SCALARS: dict[type, str] = {
    int: "int64",
    float: "float64",
    bool: "boolean",
    np.int64: "int64",
    np.int32: "int32",
    np.float64: "float64",
    np.float32: "float32",
    np.bool_: "boolean",
    np.uint8: "uint8",
}


def _arg_key(a: Any) -> Any:
    t = type(a)
    if t is np.ndarray:
        f = a.flags
        # dtype.str ('<f4') is C-level (dtype.name costs ten times as much) and tells a
        # non-native byte order ('>f4'), which no signature has, as numba refuses it.
        return (a.dtype.str, a.ndim) if f.c_contiguous and f.writeable else None
    if isinstance(a, tuple):  # a kernel's bundle (a NamedTuple) is typed as its tuple
        return ("tuple", *map(_arg_key, a))
    return _SCALARS.get(t)


def argument_key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """What a call's arguments must match in a signature's ``signature_key``: the module
    checks no type, so this is exactly numba's typing of them (``numba.typeof``) for the
    arguments a signature can take: arrays by dtype, number of dimensions and C-contiguous,
    writable, native-order storage (not alignment: numba types an array read at an odd
    offset of a model file as any other, and the module's code is numba's); numbers by
    type; tuples element by element; ``None`` for anything else."""
    return tuple(map(_arg_key, args))


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _type_key(spec: str) -> Any:
    spec = spec.strip()
    if m := re.fullmatch(r"(\w+)\[((?::\s*,\s*)*::1)\]", spec):
        dtype = "bool" if m[1] == "boolean" else m[1]
        return (np.dtype(dtype).str, m[2].count(",") + 1)
    if m := re.fullmatch(r"UniTuple\((.+),\s*(\d+)\)", spec):
        return ("tuple", *[_type_key(m[1])] * int(m[2]))
    if m := re.fullmatch(r"Tuple\(\((.*)\)\)", spec):
        return ("tuple", *map(_type_key, _split_top(m[1])))
    if spec in _SCALARS.values():
        return spec
    raise ValueError(f"unsupported kernel argument type {spec!r}")


def signature_key(signature: tuple[str, ...]) -> tuple[Any, ...]:
    """The ``argument_key`` of the calls a signature (numba's type strings, C-contiguous
    arrays only) accepts."""
    return tuple(map(_type_key, signature))


def enabled() -> bool:
    """Whether the extension module may be used (``LPCFG_PRECOMPILED`` is not ``0``)."""
    return os.environ.get("LPCFG_PRECOMPILED", "1").strip() != "0"


def processor() -> str | None:
    """This processor's name and instruction set from ``/proc/cpuinfo``, None without it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    first = text.split("\n\n", 1)[0]
    fields = [line for line in first.splitlines() if line.split(":", 1)[0].strip() in _CPU_FIELDS]
    return "\n".join(fields) if fields else None


def installed_version(package: str) -> str:
    """The version of an installed ``package`` without importing it, read off the name of
    its ``NAME-VERSION.dist-info`` folder beside it, or from ``importlib.metadata`` (whose
    import costs a short parse a tenth of its start-up) where there is none; LookupError if
    it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(package)
    site = os.path.dirname(list(spec.submodule_search_locations)[0])
    prefix = f"{package}-"
    found = [
        name[len(prefix) : -len(".dist-info")]
        for name in os.listdir(site)
        if name.startswith(prefix) and name.endswith(".dist-info")
    ]
    if len(found) == 1:
        return found[0]
    from importlib import metadata  # no or several dist-info folders: the installer's records

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        raise LookupError(package) from None


def digest() -> str | None:
    """What the module is built from, hashed; None where it cannot be used (see the module
    docstring)."""
    cpu = processor()
    if cpu is None:
        return None
    h = hashlib.sha256()
    try:
        versions = [installed_version(p) for p in ("numba", "llvmlite")]
    except LookupError:
        return None
    # numpy's too: a module built against one numpy's C interface may not import in another.
    for part in (sys.version, sys.platform, np.__version__, *versions, cpu):
        h.update(part.encode() + b"\0")
    for name in SOURCES:
        with open(os.path.join(jit._PACKAGE, name), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()[:20]


def module_name() -> str | None:
    """The file name of this machine's module; None where it cannot be used."""
    if not enabled():
        return None
    key = digest()
    if key is None:
        return None
    return f"{MODULE}-{key}{importlib.machinery.EXTENSION_SUFFIXES[0]}"


def module_path() -> str | None:
    """Where this machine's module is: in the first of numba's cache folders that holds it,
    writable or not (``jit.cache_folders``), else where it would be built
    (``build_path``); None where it cannot be used."""
    name = module_name()
    if name is None:
        return None
    for folder in jit.cache_folders():
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return build_path(name)


def build_path(name: str | None = None) -> str | None:
    """Where this machine's module is built: the folder numba's cache is written to
    (``jit.cache_folder``); None where there is none or the module cannot be used."""
    name = name or module_name()
    folder = jit.cache_folder()
    if name is None or folder is None:
        return None
    return os.path.join(folder, name)


def export_name(qualified_name: str, index: int) -> str:
    """The extension module's name for a kernel's ``index``-th signature."""
    return f"{qualified_name.replace('.', '__')}__{index}"


def functions(qualified_name: str) -> dict[tuple[Any, ...], Callable[..., Any]]:
    """A kernel's compiled functions by the ``argument_key`` of the calls each accepts
    (empty where there is no module: the kernel then runs through numba)."""
    module = load()
    if module is None:
        return {}
    found = {}
    for i, signature in enumerate(SIGNATURES.get(qualified_name, ())):
        fn = getattr(module, export_name(qualified_name, i), None)
        if fn is not None:
            found[signature_key(signature)] = fn
    return found


def load() -> ModuleType | None:
    """This machine's module, built first if it is missing (once per process)."""
    global _module
    if _module is _UNTRIED:
        _module = None
        path = module_path()
        if path is not None:
            if not os.path.exists(path) and not os.path.exists(path + ".failed"):
                _build_once(path)
            if os.path.exists(path):
                _module = _import(path)
    return _module


def _import(path: str) -> ModuleType | None:
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return module


def _build_once(path: str) -> None:
    """Build the module at ``path`` unless another process did while this one waited."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Windows, where processor() is None
        return
    try:
        lock = open(path + ".lock", "a")  # held until the build ends
    except OSError:
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(path) and not os.path.exists(path + ".failed"):
            build(path)


@contextmanager
def _output_to(log: Any) -> Iterator[None]:
    """File descriptors 1 and 2 to ``log`` meanwhile: the C compiler, a child process,
    must not write into a parse sent to stdout."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


@contextmanager
def _own_options(options: dict[Any, dict[str, Any]]) -> Iterator[None]:
    """numba.pycc compiles what it exports with its default options; meanwhile, each
    function in ``options`` (a kernel's) is compiled with its kernel's numba options
    (``fastmath`` above all: the coarse pass's reductions vectorise only with it), turned
    into compiler flags as numba's own dispatcher turns them."""
    from numba.core.cpu import CPUTargetOptions
    from numba.pycc import compiler

    plain = compiler.compile_extra

    def compile_extra(typingctx, targetctx, func, args, return_type, flags, **kwargs):
        if func in options:
            flags = CPUTargetOptions.parse_as_flags(flags.copy(), options[func])
        return plain(typingctx, targetctx, func, args, return_type, flags, **kwargs)

    compiler.compile_extra = compile_extra
    try:
        yield
    finally:
        compiler.compile_extra = plain


def build(path: str) -> bool:
    """Compile every signature of ``precompiled_signatures`` into the module at ``path``
    (written whole or not at all); on failure leave ``path.failed`` and say so once."""
    try:
        work = tempfile.mkdtemp(prefix=f".{MODULE}-", dir=os.path.dirname(path))
    except OSError as e:
        failure, error = str(e), type(e).__name__
    else:
        try:
            failure, error = _compile(path, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if failure is None:
            return True
        try:
            with open(path + ".failed", "w") as f:
                f.write(failure)
        except OSError:
            pass
    print(
        f"lpcfg: warning: could not compile the kernels ahead of time ({error}; "
        f"{path}.failed says more): numba compiles them at each start instead, which "
        "is slower",
        file=sys.stderr,
    )
    return False


def _compile(path: str, work: str) -> tuple[str | None, str]:
    """``build`` in the folder ``work``: (None, "") when the module is at ``path``, else the
    compiler's output and the error's name."""
    import warnings

    try:
        log = open(os.path.join(work, "build.log"), "w+")  # closed by the with below
    except OSError as e:
        return str(e), type(e).__name__
    with log, _output_to(log):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from numba.core import sigutils
                from numba.pycc import CC
            kernels = {
                name: getattr(importlib.import_module(module), function)
                for name in SIGNATURES
                for module, function in [name.rsplit(".", 1)]
            }
            cc = CC(MODULE)
            cc.output_dir = work
            cc.target_cpu = "host"
            cc.verbose = False
            options = {}
            for name, signatures in SIGNATURES.items():
                # The dispatcher's function: its globals bind the kernels it calls to
                # their dispatchers, which numba compiles with their own options.
                dispatcher = kernels[name].dispatcher
                options[dispatcher.py_func] = kernels[name].options
                for i, signature in enumerate(signatures):
                    args, _ = sigutils.normalize_signature(f"({', '.join(signature)},)")
                    dispatcher.compile(args)
                    result = dispatcher.overloads[args].signature.return_type
                    cc.export(export_name(name, i), result(*args))(dispatcher.py_func)
            with _own_options(options):
                cc.compile()
            os.replace(os.path.join(work, os.path.basename(cc.output_file)), path)
            return None, ""
        except Exception as e:  # any failure leaves numba's path
            log.write(f"\n{type(e).__name__}: {e}\n")
            log.flush()
            log.seek(0)
            return log.read(), type(e).__name__


def main() -> int:
    """``python -m lpcfg_cli.engine.precompiled``: build this machine's module now into the
    folder numba's cache is written to (run by whoever installs lpcfg, the install's
    ``__pycache__``, where every user reads it; or when preparing a container image, or
    before a cluster's jobs start) and print where it is; status 1 where it cannot be used
    or built. Building compiles the kernels with numba first, so numba's cache beside the
    sources gets them too."""
    global _module
    path = build_path()
    if path is None:
        print(
            "lpcfg: error: no kernels' module here (LPCFG_PRECOMPILED=0, no /proc/cpuinfo, "
            "numba not installed, or no writable cache folder)",
            file=sys.stderr,
        )
        return 1
    if not os.path.exists(path) and not os.path.exists(path + ".failed"):
        _build_once(path)
    _module = _import(path) if os.path.exists(path) else None
    if _module is None:
        print(
            f"lpcfg: error: the kernels' module could not be built: {path}.failed", file=sys.stderr
        )
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
