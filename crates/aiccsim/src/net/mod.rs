//! The fabric's moving parts: packets, ports (serialiser + link), switches.

pub mod packet;
pub mod pool;
pub mod port;
pub mod switch;
pub mod telemetry;
