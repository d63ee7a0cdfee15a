#!/usr/bin/env bash
# Rebuild UEC's htsim (the peer) and re-run every scenario of this folder, then rewrite
# peer_results/ from its output. Not run by CI: it needs the peer's sources, cmake and a C++17
# compiler. About a minute of building on two cores and under 30 s of runs.
#
#   tests/uet_htsim/rerun_peer.sh [CLONE_DIR]        (default: a temporary folder)
#
# With UET_HTSIM_REPO set (a local mirror), the clone comes from there instead of GitHub.
# Set REGENERATE=1 to remake inputs/ with the peer's generators first (they are stable:
# Python's random.seed/shuffle give the same draws on every Python 3). SEEDS=N runs every
# scenario with seeds 13 to 12 + N (default 5); summary.csv keeps a row per seed, and only
# seed 13 keeps its per-flow times and log.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="${UET_HTSIM_REPO:-https://github.com/ultraethernet/uet-htsim}"
commit=40ccb0526bb6297eeb22ab33f9934fb35278dbaf  # 2025-08-13, "Clean up documentation."
clone="${1:-$(mktemp -d)/uet-htsim}"
n_seeds="${SEEDS:-5}"

if [ ! -d "$clone/.git" ]; then
    git clone "$repo" "$clone"
fi
git -C "$clone" checkout --quiet "$commit"
# peer.patch only prints the switch queues' trim and drop counters at the end of a run; the
# stock binary reports no trims. It changes nothing the simulation does.
if ! git -C "$clone" apply --reverse --check "$here/peer.patch" 2>/dev/null; then  # not applied yet
    git -C "$clone" apply "$here/peer.patch"
fi

sim="$clone/htsim/sim"
cmake -S "$sim" -B "$sim/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$sim/build" --target htsim_uec -j "${JOBS:-2}" >/dev/null
bin="$sim/build/datacenter/htsim_uec"

if [ "${REGENERATE:-0}" = 1 ]; then
    gen="$sim/datacenter/connection_matrices"
    # gen_incast.py FILE NODES CONNS SIZE EXTRASTART SEED PREFER_REMOTE
    python3 "$gen/gen_incast.py" "$here/inputs/incast8_128n_2MB.cm" 128 8 2000000 0 1 0 >/dev/null
    python3 "$gen/gen_incast.py" "$here/inputs/incast32_128n_2MB.cm" 128 32 2000000 0 1 0 >/dev/null
    # gen_permutation.py FILE NODES CONNS SIZE EXTRASTART SEED
    python3 "$gen/gen_permutation.py" "$here/inputs/perm_128n_2MB.cm" 128 128 2000000 0 1 >/dev/null
    # gen_serial_alltoall.py FILE NODES CONNS GROUPSIZE SIZE EXTRASTART SEED
    python3 "$gen/gen_serial_alltoall.py" "$here/inputs/a2aserial_16n_2MB.cm" 16 16 16 2000000 0 1 >/dev/null
    # The peer has no generator for a direct all-to-all (every flow at once): ours, same format.
    python3 "$here/gen_alltoall.py" "$here/inputs/a2a_16n_2MB.cm" 16 16 2000000
    python3 "$here/gen_alltoall.py" "$here/inputs/a2a_32of128n_2MB.cm" 128 32 2000000
fi

# The command line of every run: 400 Gbps links (default 100), 4096 B payload + 64 B header
# (-mtu is the whole packet), REPS (the default is "mixed"), and an end time past every flow
# (the default -end is 1000 us). NSCC, trimming, ECN, queue sizes and RTO are the defaults.
run_dir="$(mktemp -d)"
# Run in the scratch folder (the peer writes idmap.txt and its logfile where it runs), on copies
# of the matrices, so that the logs name them without this machine's paths.
cp "$here"/inputs/*.cm "$run_dir"/
cd "$run_dir"
while read -r name matrix; do
    for seed in $(seq 13 $((12 + n_seeds))); do
        "$bin" -tm "$matrix" -linkspeed 400000 -mtu 4160 -end 100000 \
            -load_balancing_algo reps -seed "$seed" -o "$run_dir/$name.seed$seed.dat" \
            >"$run_dir/$name.seed$seed.out"
    done
done <<'EOF'
incast8 incast8_128n_2MB.cm
incast32 incast32_128n_2MB.cm
permutation128 perm_128n_2MB.cm
alltoall16 a2a_16n_2MB.cm
alltoall32 a2a_32of128n_2MB.cm
alltoall16_serial a2aserial_16n_2MB.cm
EOF

python3 "$here/peer.py" collect "$run_dir" "$n_seeds"
echo "peer_results/ rewritten from $run_dir (peer $commit + peer.patch)"
