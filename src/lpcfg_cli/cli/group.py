"""The ``lpcfg`` command line: a thin layer over the library.

Every error reaches the user as one line ``lpcfg: error: ...`` on stderr, with exit status 2
for bad usage or bad input and 1 for a failed requested check; never a traceback.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from lpcfg_cli import __version__, errors
from lpcfg_cli.cli.names import SHORT_HELP, SUBCOMMANDS
from lpcfg_cli.cli.options import flag_of
from lpcfg_cli.cli.paths import guard_outputs
from lpcfg_cli.cli.stderr import quiet_param
from lpcfg_cli.errors import LpcfgError, ParameterError, Terminated

# Subcommands are imported only when they run (or when all are needed: --config): importing
# all of them (the learners pull in scipy.optimize, the WCFG and LM code) took several times
# as long as the imports `lpcfg parse` needs. `lpcfg --help` lists them from `SHORT_HELP`
# without importing any, where it imported all ten to read their docstrings
# (docs/design-notes.md, Start-up).


# Subcommands whose arithmetic is the compiled kernels', not BLAS: OpenBLAS starts its pool
# of threads when numpy loads, and they spin for a while on the other cores before they
# sleep, beside the parse and the workers forked after the set-up (docs/design-notes.md,
# Start-up). With OPENBLAS_NUM_THREADS=1 before numpy is imported the pool is never made;
# a value the user set is kept.
ONE_BLAS_THREAD = frozenset({"parse"})


class _StdoutClosed(Exception):
    """A write to stdout failed with EPIPE; carried past click, which would exit 1."""


class LpcfgGroup(click.Group):
    """Click group that reports errors in the project's one-line format and loads its
    subcommands lazily (click's documented pattern for start-up time)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(SUBCOMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in SUBCOMMANDS:
            if cmd_name in ONE_BLAS_THREAD and "numpy" not in sys.modules:
                os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
            module = importlib.import_module(f"lpcfg_cli.cli.{SUBCOMMANDS[cmd_name]}")
            command = module.command
            if not any(p.name == "quiet" for p in command.params):
                command.params.append(quiet_param())  # --quiet on every subcommand
            command.short_help = SHORT_HELP[cmd_name]
            guard_outputs(command)  # no -o may be an input of the run
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The ``Commands:`` section of the help, from ``SHORT_HELP``: no subcommand is
        imported to list it."""
        rows = [(name, SHORT_HELP[name]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def all_commands(self, ctx: click.Context | None = None) -> dict[str, click.Command]:
        """Every subcommand, loaded."""
        ctx = ctx or click.Context(self)
        names = self.list_commands(ctx)
        return {n: c for n in names if (c := self.get_command(ctx, n)) is not None}

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise _StdoutClosed from exc

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``lpcfg`` alone prints the help (usage and commands) to stdout and exits 0, as
        ``lpcfg --help`` does: asking what the tool does is not an error."""
        if not args and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def main(self, *args, **kwargs):  # type: ignore[override]
        kwargs["standalone_mode"] = False
        kwargs["prog_name"] = "lpcfg"  # also when run as ``python -m lpcfg_cli``
        try:
            with _catching_termination():
                rv = super().main(*args, **kwargs)
                sys.stdout.flush()  # a closed stdout shows here, not at interpreter exit
                errors.raise_if_terminated()  # a signal whose exception C code swallowed
        except Terminated as exc:
            _end_by_signal(exc.signum)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            _fail("aborted", 130)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            _fail(f"{exc.format_message()}{hint}", 2)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except ParameterError as exc:  # the library names parameters; here they are flags
            origins = exc.origins
            _fail(exc.place() + exc.render(lambda name: _flag(name, origins)), exc.exit_code)
        except LpcfgError as exc:
            _fail(str(exc), exc.exit_code)
        except (BrokenPipeError, _StdoutClosed):
            _end_on_closed_stdout()
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except MemoryError as exc:  # numpy's says how much it asked for
            _fail(f"out of memory ({exc})" if str(exc) else "out of memory", 2)
        except OSError as exc:  # one not tied to a named input or output (those say which)
            where = f"{exc.filename}: " if exc.filename else ""
            _fail(f"{where}{exc.strerror or exc}", 2)
        except Exception as exc:  # a bug: still one line; LPCFG_DEBUG=1 shows the traceback
            if os.environ.get("LPCFG_DEBUG"):
                raise
            _fail(
                f"internal error ({type(exc).__name__}: {exc}); please report it "
                "(LPCFG_DEBUG=1 shows the traceback)",
                2,
            )
        sys.exit(rv if isinstance(rv, int) else 0)


# Signals that end a run the way Ctrl-C does: ``timeout`` and Slurm send SIGTERM, a closed
# terminal SIGHUP. Python's default for them ends the process at once, leaving the hidden
# temporary file of an output being written; raised as ``Terminated`` instead, they unwind
# through ``fileio.atomic_output``, which removes it.
TERMINATING = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _raise_terminated(signum: int, _frame: object) -> None:
    errors.terminated_by = signum
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _quiet_unraisable(unraisable: Any) -> None:
    """Python's hook for an exception it cannot raise (one in a callback from C code),
    silent for the signals above: ``errors.raise_if_terminated`` raises them again where
    it matters, and the user gets no traceback."""
    if isinstance(unraisable.exc_value, (Terminated, KeyboardInterrupt)):
        return
    sys.__unraisablehook__(unraisable)


@contextlib.contextmanager
def _catching_termination() -> Iterator[None]:
    """Turn the terminating signals into ``Terminated`` (Ctrl-C into ``KeyboardInterrupt``,
    as Python does), each recorded in ``errors.terminated_by``, for the run; a signal the
    caller ignores stays ignored (``nohup`` ignores SIGHUP, a background job of a script
    SIGINT). The caller's handlers are restored afterwards (a run in process, as tests and
    notebooks make, leaves the process as it found it)."""
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, *TERMINATING)}
    hook = sys.unraisablehook
    errors.terminated_by = None
    for signum, handler in saved.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, _raise_terminated)
    sys.unraisablehook = _quiet_unraisable
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        sys.unraisablehook = hook


def _end_by_signal(signum: int) -> NoReturn:
    """End by ``signum`` itself, after the clean-up, so that the parent sees what it sent
    (status 128 + signum in the shell), as Unix tools do."""
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # not reached where the signal ends the process


def _flag(name: str, origins: dict[str, str]) -> str:
    """The flag of library parameter ``name``, and the file that set it if one did."""
    flag = flag_of(name)
    config = origins.get(flag.lstrip("-").replace("-", "_"))
    return f"{flag} (set in {config})" if config else flag


def _fail(message: str, status: int) -> NoReturn:
    """Report ``message`` as the one error line (newlines folded) and exit; after a
    terminating signal the error is its consequence (C code that swallowed the exception and
    failed in its own way), so the process ends by the signal instead."""
    if errors.terminated_by is not None and errors.terminated_by != signal.SIGINT:
        _end_by_signal(errors.terminated_by)
    click.echo(f"lpcfg: error: {' '.join(message.splitlines())}", err=True)
    sys.exit(status)


def _end_on_closed_stdout() -> NoReturn:
    """stdout's reader went away (``lpcfg ... | head -1``): end quietly as Unix tools do.

    Outputs given with ``-o`` report a broken pipe as an error themselves, so only stdout
    gets here. Like ``cat`` or ``grep`` the process ends by SIGPIPE (status 141 in the
    shell), with no message; stdout is pointed at the null device first so that Python's
    final flush cannot fail again and print a traceback.
    """
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), sys.stdout.fileno())
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    sys.exit(1)  # no SIGPIPE on this platform: Python's own convention for EPIPE


@click.group(cls=LpcfgGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lpcfg")
def main() -> None:
    """Learn latent-variable PCFGs from treebanks and parse with them.

    Pipeline: binarize -> train -> parse -> evaluate. Data goes to stdout (or -o FILE),
    progress and summaries to stderr. Exit status: 0 success, 1 a requested check failed,
    2 bad usage or bad input.
    """


def run() -> NoReturn:
    """The ``lpcfg`` program (the console script and ``python -m lpcfg_cli``): ``main``,
    then a quick end of the process.

    When the command returns, its outputs are complete (files renamed into place, stdout
    flushed by ``LpcfgGroup.main``). After the exit handlers and a last flush of stdout and
    stderr only the interpreter's teardown of every module and object is left, numba's and
    LLVM's among them, a noticeable share of a short command (docs/design-notes.md,
    Start-up). The process skips it and ends at once with the
    command's status (``os._exit``), unless anything could still be pending (a non-daemon
    thread alive, a flush failing) or a profiler, debugger or coverage tracer is attached
    (``python -m cProfile``, pyinstrument, pdb write their reports after the program
    returns): then it ends the ordinary way. ``main`` itself, run in a process that goes on
    (tests, notebooks), is an ordinary click command.
    """
    try:
        main()
        status: object = 0  # not reached: LpcfgGroup.main ends by sys.exit
    except SystemExit as exc:
        status = exc.code
    if status is not None and not isinstance(status, int):
        raise SystemExit(status)  # Python's own way: the message printed, status 1
    code = status or 0
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    watched = sys.getprofile() is not None or sys.gettrace() is not None
    if watched or any(t.is_alive() and not t.daemon for t in others):
        sys.exit(code)  # Python waits for the threads; the tools report after it
    try:
        atexit._run_exitfuncs()  # what an ordinary exit would run (and then forgets them)
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        sys.exit(code)
    os._exit(code)
