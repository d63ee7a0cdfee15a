"""`python -m aiccsim ARGS` is the `aiccsim` command (``aiccsim run``, ``validate``,
``reproduce``, ...), compiled into the native module: a pip install needs no other binary.
The package also installs it as the ``aiccsim`` script."""

import signal
import sys
from typing import NoReturn

from aiccsim import _native


def main() -> NoReturn:
    # `python -m aiccsim validate x.toml | head` ends quietly once `head` exits, as the binary
    # does, instead of failing on the closed pipe (Python ignores SIGPIPE by default).
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # `bench` starts itself again per scenario: through this interpreter.
    relaunch = [sys.executable, "-m", "aiccsim"]
    sys.exit(_native.cli_main(["aiccsim", *sys.argv[1:]], relaunch))


if __name__ == "__main__":
    main()
