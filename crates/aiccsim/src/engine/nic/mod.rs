//! The RDMA NIC, one file per mechanism: the transmit scheduler and receive path (`host.rs`),
//! queue pairs (`qp.rs`), connections shared by consecutive transfers (`connection.rs`), loss recovery (`recovery.rs`), the rate limiter (`pacing.rs`), and the
//! hosts' clocks (`clock.rs`).

pub mod clock;
pub mod connection;
pub mod host;
mod pacing;
pub mod qp;
mod recovery;
