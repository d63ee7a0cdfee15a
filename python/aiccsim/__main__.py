"""`python -m aiccsim ARGS` is the `aiccsim` command (``aiccsim run``, ``validate``,
``reproduce``, ...), compiled into the native module: a pip install needs no other binary.
The package also installs it as the ``aiccsim`` script.

``report``, ``plot`` and ``parquet`` are written in Python (aiccsim/_commands.py): they are taken
here, before the native command line (whose own ``report``, ``plot`` and ``parquet`` start this)."""

import os
import signal
import sys
from typing import NoReturn

from aiccsim import _native


def main() -> NoReturn:
    # `python -m aiccsim validate x.toml | head` ends quietly once `head` exits, as the binary
    # does, instead of failing on the closed pipe (Python ignores SIGPIPE by default).
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:]
    # What the native command hands to Python (the plot of `reproduce`, `reproduce --report`)
    # runs in this interpreter, which has the package, unless the user names another.
    os.environ.setdefault("AICCSIM_PYTHON", sys.executable)
    if args[:1] in (["report"], ["plot"], ["parquet"]):
        from aiccsim import _commands

        sys.exit(_commands.main(args))
    # `bench` starts itself again per scenario: through this interpreter.
    relaunch = [sys.executable, "-m", "aiccsim"]
    sys.exit(_native.cli_main(["aiccsim", *args], relaunch))


if __name__ == "__main__":
    main()
