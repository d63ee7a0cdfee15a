"""Writes bigread.toml (a TOML of 300 000 flows: seconds to read) and a2a.toml (a 1400-host
all-to-all: 1.96 M flows to lay out and set up) into the current folder."""

flows = ",\n".join(f'{{ src = {i % 999 + 1}, dst = 0, size = "1000B" }}' for i in range(300000))
with open("bigread.toml", "w") as f:
    f.write(
        '[topology]\nkind = "star"\nhosts = 1000\nlink = { bandwidth = "100Gbps", delay = "1us" }\n'
        f'[workload]\nkind = "flows"\nflows = [\n{flows}\n]\n'
    )
with open("a2a.toml", "w") as f:
    f.write(
        '[topology]\nkind = "star"\nhosts = 1400\nlink = { bandwidth = "100Gbps", delay = "1us" }\n'
        '[switch]\npfc = { enabled = false }\n[workload]\nkind = "all_to_all"\nsize = "1GB"\n'
    )
