//! The RDMA NIC, one file per mechanism: the transmit scheduler and receive path (`host.rs`),
//! queue pairs (`qp.rs`), loss recovery (`recovery.rs`), the rate limiter (`pacing.rs`), and the
//! hosts' clocks (`clock.rs`).

pub mod clock;
pub mod host;
mod pacing;
pub mod qp;
mod recovery;
