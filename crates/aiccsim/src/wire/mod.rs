//! What travels on the wire: the packet and the telemetry it carries. The fabric (`engine/net`)
//! and the NICs (`engine/nic`) build and read them; the algorithms (`cc`) read the telemetry.

pub mod packet;
pub mod telemetry;
