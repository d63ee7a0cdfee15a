//! The fabric's moving parts, one file per mechanism: ports (serialiser + link), switches and
//! their shared buffer (counted in pools, `buffer.rs`), PFC, ECN marking, routing among
//! equal-cost paths (ECMP, spray, adaptive, flowlets), links that slow down, fail and come back,
//! the telemetry switches stamp, and the packet pool.

pub mod buffer;
mod ecn;
pub mod failures;
pub mod pfc;
pub mod pool;
pub mod port;
pub mod routing;
pub mod switch;
pub mod telemetry;
