"""DCTCP written in Python: a port of the built-in `dctcp` (crates/aiccsim/src/cc/dctcp.rs).

Alizadeh et al., "Data Center TCP", SIGCOMM 2010, on RoCE as the HPCC study runs it: the rate
paces packets, the window follows it (W = R * base RTT); once per window of data alpha becomes
(1 - g) * alpha + g * F, F the fraction of marked packets; the first marked ACK outside CWR cuts
the rate by alpha / 2; each clean window adds one additive step.

Name it in a scenario (here, one in examples/; elsewhere, add `path = "<folder of this file>"`):

    [cc]
    algorithm = "python"
    class = "dctcp:Dctcp"

Its flows.csv is byte-identical to the built-in's (tests/python/test_algorithm.py checks it).
"""


class Dctcp:
    def __init__(self, g=1 / 16, additive_increase=615e6, min_rate=1e9, initial_alpha=1.0):
        self.g = g
        self.additive_increase = additive_increase
        self.min_rate = min_rate
        self.alpha = initial_alpha
        # The window being observed ends when this byte is acknowledged (None before the first ACK).
        self.window_end = None
        # Marked packets in the window being observed, and the packets it holds.
        self.marked = 0
        self.window_packets = 1
        # Congestion window reduced: no further cut until this byte is acknowledged.
        self.cwr_end = None

    def on_start(self, flow):
        self.mtu = flow.mtu
        self.base_rtt = flow.base_rtt
        self.line_rate = flow.line_rate
        self.rate = flow.line_rate
        flow.window = self.window_for_rate()

    def on_ack(self, flow, ack):
        ecn_echo, ack_seq, snd_nxt = ack.ecn_echo, ack.ack_seq, ack.snd_nxt
        if ecn_echo:
            # The echo covers every packet this ACK acknowledges (several with ACK coalescing).
            self.marked += max(-(-ack.newly_acked // self.mtu), 1)
        new_window = False
        if self.window_end is None:
            self.window_end = snd_nxt
            self.window_packets = snd_nxt // self.mtu + 1
            new_window = True
        elif ack_seq > self.window_end:
            # Eq. 1: the fraction of marked packets over the last window.
            frac = min(self.marked / self.window_packets, 1.0)
            self.alpha = (1.0 - self.g) * self.alpha + self.g * frac
            self.window_end = snd_nxt
            self.marked = 0
            self.window_packets = (snd_nxt - min(ack_seq, snd_nxt)) // self.mtu + 1
            new_window = True
        if self.cwr_end is not None and ack_seq > self.cwr_end:
            self.cwr_end = None
        changed = False
        if ecn_echo and self.cwr_end is None:
            # Eq. 2, once per window.
            self.rate = max(self.rate * (1.0 - self.alpha / 2.0), self.min_rate)
            self.cwr_end = snd_nxt
            changed = True
        if self.cwr_end is None and new_window:
            self.rate = min(self.rate + self.additive_increase, self.line_rate)
            changed = True
        if changed:
            flow.rate = self.rate
            flow.window = self.window_for_rate()

    def window_for_rate(self):
        """The window that sustains the rate over a base round trip (bytes, at least 1)."""
        return max(int(self.rate * self.base_rtt / 8.0), 1)
