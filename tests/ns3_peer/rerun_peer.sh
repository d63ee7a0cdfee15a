#!/usr/bin/env bash
# Rebuild the HPCC ns-3 simulator (the peer) and re-run every scenario of this folder, then
# rewrite peer_results/ from its output. Not run by CI: it needs the peer's sources, Python 2.7
# for its waf, and a C++ compiler. About 40 minutes of building on two shared cores, and a few
# CPU-minutes of runs.
#
#   tests/ns3_peer/rerun_peer.sh [CLONE_DIR]        (default: a temporary folder)
#
# With HPCC_NS3_REPO set (a local mirror), the clone comes from there instead of GitHub; with
# PYTHON2 set, that interpreter runs waf (default: python2). RUNS (default "1 2 3") are the ns-3
# RngRun values each scenario runs with: they draw ns-3's ECN marks differently.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="${HPCC_NS3_REPO:-https://github.com/alibaba-edu/High-Precision-Congestion-Control}"
commit=9f4be2a9ead8a90e8bf732c66bd758c00e58e5be  # 2021-03-11, the repository's last commit
clone="${1:-$(mktemp -d)/hpcc-ns3}"
python2="${PYTHON2:-python2}"

if [ ! -d "$clone/.git" ]; then
    git clone "$repo" "$clone"
fi
git -C "$clone" checkout --quiet "$commit"
# peer.patch only writes, when HPCC_RX_FCT_FILE names a file, the moment each flow's receiver
# has its last byte (ns-3's own FCT ends at the sender's last ACK). It changes nothing the
# simulation does.
if ! git -C "$clone" apply --reverse --check "$here/peer.patch" 2>/dev/null; then  # not applied yet
    git -C "$clone" apply "$here/peer.patch"
fi

sim="$clone/simulation"
# g++ 12 compiles the 2013 code with these flags and no source change: C++11 (the code uses
# unordered_map, auto), errors of its style made warnings. Only the three modules third.cc uses.
# Configured once: configuring again rebuilds everything.
bin="$sim/build/scratch/third"
if [ ! -x "$bin" ]; then
    (cd "$sim" && CXXFLAGS="-std=c++11 -fpermissive -Wno-error -w" "$python2" ./waf configure \
        --build-profile=optimized --enable-modules=point-to-point,applications,internet \
        --disable-python --disable-examples --disable-tests >/dev/null)
fi
(cd "$sim" && "$python2" ./waf build -j "${JOBS:-2}" >/dev/null)

if [ "${REGENERATE:-0}" = 1 ]; then
    python3 "$here/gen_inputs.py"
fi

run_dir="$(mktemp -d)"
for input in "$here"/inputs/*/; do
    name="$(basename "$input")"
    for run in ${RUNS:-1 2 3}; do
        dir="$run_dir/$name.run$run"
        mkdir -p "$dir"
        cp "$input"/*.txt "$dir"/
        # third.cc reads and writes the files its configuration names, relative to where it runs.
        (cd "$dir" && HPCC_RX_FCT_FILE=rx_fct.txt NS_GLOBAL_VALUE="RngRun=$run" \
            LD_LIBRARY_PATH="$sim/build" "$bin" config.txt >stdout.txt)
        echo "$name run $run: $(tail -1 "$dir/stdout.txt") s"
    done
done

python3 "$here/peer.py" collect "$run_dir"
echo "peer_results/ rewritten from $run_dir (peer $commit + peer.patch)"
