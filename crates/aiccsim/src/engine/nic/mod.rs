//! The RDMA NIC: queue pairs with go-back-N, the transmit scheduler, the receive path.

pub mod clock;
pub mod host;
pub mod qp;
