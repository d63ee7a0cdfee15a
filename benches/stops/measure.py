"""Times Ctrl-C (`int`) or `--max-wall` (`wall`) in each phase of `aiccsim run SCENARIO`: see
benches/stops/README.md. Writes its runs' results to ./o."""

import signal
import subprocess
import sys
import time

binary, scenario, mode = sys.argv[1:4]
run = [binary, "run", scenario, "--out", "o", "-q"]
for at in [0.02, 0.1, 0.25, 0.5, 0.8, 1.1, 1.4, 1.7, 2.0]:
    if mode == "int":
        child = subprocess.Popen(run, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        time.sleep(at)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        said = child.communicate()[1].strip().splitlines()
        took, code, what = time.monotonic() - sent, child.returncode, f"SIGINT at {at:4.2f} s"
    else:
        started = time.monotonic()
        done = subprocess.run([*run, "--max-wall", f"{int(at * 1000)}ms"], capture_output=True, text=True)
        said = done.stderr.strip().splitlines()
        took, code, what = time.monotonic() - started, done.returncode, f"--max-wall {int(at * 1000)}ms"
    print(f"{what}: exit {code} after {took * 1000:.0f} ms: {said[-1][:110] if said else ''}")
