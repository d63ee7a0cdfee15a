"""`python -m aiccsim ARGS` is the `aiccsim` command (``aiccsim run``, ``validate``,
``reproduce``, ...), compiled into the native module: a pip install needs no other binary.
The package also installs it as the ``aiccsim`` script."""

import sys
from typing import NoReturn

from aiccsim import _native


def main() -> NoReturn:
    # `bench` starts itself again per scenario: through this interpreter.
    relaunch = [sys.executable, "-m", "aiccsim"]
    sys.exit(_native.cli_main(["aiccsim", *sys.argv[1:]], relaunch))


if __name__ == "__main__":
    main()
