//! The fabric's moving parts: ports (serialiser + link), switches, the packet pool and the
//! telemetry switches stamp.

pub mod pool;
pub mod port;
pub mod switch;
pub mod telemetry;
