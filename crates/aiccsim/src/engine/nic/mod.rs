//! The RDMA NIC, one file per mechanism: the transmit scheduler and receive path (`host.rs`),
//! queue pairs (`qp.rs`), connections shared by consecutive transfers (`connection.rs`), loss
//! recovery (`recovery.rs`: NACKs and the retransmission timeout, with `go_back_n.rs` and
//! `selective.rs` beside it), losses on purpose (`losses.rs`), the rate limiter (`pacing.rs`),
//! RTT probes (`probe.rs`), and the hosts' clocks (`clock.rs`).

pub mod clock;
pub mod connection;
mod go_back_n;
pub mod host;
mod losses;
mod pacing;
pub mod probe;
pub mod qp;
mod recovery;
pub mod selective;
