#!/usr/bin/env bash
# Record the path of every flow of the k = 4 fat tree through the HPCC ns-3 simulator (the peer),
# from its own packet trace, into peer_results/fattree.paths.csv: what the test
# `net_ecmp_ns3` checks an imported twin against. The peer must be built (rerun_peer.sh);
# nothing of it is patched for this: its configuration turns its trace on (ENABLE_TRACE 1, every
# switch in trace.txt) and stops it at 2.004 s, once every flow's first packets and ACKs are
# through (the last flow starts at 2.003473 s). Paths do not depend on RngRun, nor on the
# algorithm: the DCQCN inputs serve for both.
#
#   tests/ns3_peer/record_paths.sh CLONE_DIR        (rerun_peer.sh's CLONE_DIR)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
sim="$1/simulation"
run="$(mktemp -d)"
cp "$here"/inputs/fattree_dcqcn/*.txt "$run"/
sed -i 's/^ENABLE_TRACE 0/ENABLE_TRACE 1/; s/^SIMULATOR_STOP_TIME .*/SIMULATOR_STOP_TIME 2.004/' "$run/config.txt"
read -r _ switches _ < "$run/topology.txt"
printf '%s\n%s\n' "$switches" "$(sed -n 2p "$run/topology.txt")" > "$run/trace.txt"
(cd "$run" && LD_LIBRARY_PATH="$sim/build" "$sim/build/scratch/third" config.txt >stdout.txt)
python3 "$here/paths.py" "$run/mix.tr" "$run/flow.txt" "$here/peer_results/fattree.paths.csv"
rm -rf "$run"  # mix.tr is about 350 MB
