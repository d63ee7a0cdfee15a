//! Point-to-point send/recv: each listed pair of ranks moves `size` bytes, on the pair's
//! connection (NCCL's `ncclSend`/`ncclRecv`, as pipeline-parallel stages exchange activations).

use super::collective::member_flow;
use super::FlowDef;
use crate::tags::CollectiveKind;
use crate::time::SimTime;

/// The flows of one send/recv: a flow of `size` bytes per (source, destination) pair, all
/// posted at `start`, in the order listed. Each is tagged `send_recv` with a group of 2.
pub fn send_recv(pairs: &[[u32; 2]], size: u64, start: SimTime) -> Vec<FlowDef> {
    (pairs.iter()).map(|&pair| member_flow(&pair, CollectiveKind::SendRecv, start)(0, 1, size, Vec::new())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_flow_per_pair_on_a_connection_in_the_listed_order() {
        let flows = send_recv(&[[3, 5], [5, 7], [3, 5]], 1000, SimTime::from_us(2));
        let ends: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(ends, [(3, 5), (5, 7), (3, 5)]);
        assert!(flows.iter().all(|f| f.size == 1000 && f.start == SimTime::from_us(2) && f.connection == Some(0)));
        assert!(flows.iter().all(|f| f.collective.unwrap().kind == CollectiveKind::SendRecv));
    }
}
