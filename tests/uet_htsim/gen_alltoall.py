"""A direct all-to-all in the peer's connection-matrix format: hosts 0 to M-1 of an N-host
fabric each send SIZE bytes to every other, all at time 0, flows ordered by sender then
receiver (the order of aiccsim's `all_to_all` workload with `algorithm = "direct"`). The peer's
own all-to-all generators (gen_serial_alltoall.py and kin) chain each sender's flows instead.

    python3 gen_alltoall.py FILE N M SIZE
"""

import sys


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    path, nodes, members, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    pairs = [(s, d) for s in range(members) for d in range(members) if s != d]
    lines = [f"Nodes {nodes}", f"Connections {len(pairs)}"]
    lines += [f"{s}->{d} id {i} start 0 size {size}" for i, (s, d) in enumerate(pairs, start=1)]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
