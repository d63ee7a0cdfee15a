//! Checks a parsed scenario for what its types cannot express. Each failure is
//! (dotted key, message) and the message says what to write instead.

use super::{
    AllReduceWorkload, AllToAllWorkload, FlowList, HostSet, IncastWorkload, PermutationWorkload, Scenario,
    TrainingWorkload, WorkloadConfig,
};
use crate::topology::Topology;

type Check = Result<(), (String, String)>;

/// Flows in one scenario at most: each costs about a kilobyte of state (its queue pair, both
/// halves of its algorithm, its record), so this is a few gigabytes. Workloads multiply
/// (all-to-all is n^2 x `flows_per_pair`), and a typo should not become an out-of-memory crash.
const MAX_FLOWS: u64 = 1 << 22;

/// Compute steps in one scenario at most (a `training` workload has three per layer, rank and
/// iteration), about a hundred bytes each.
const MAX_COMPUTE_STEPS: u64 = 1 << 22;

fn fail(key: impl Into<String>, msg: impl Into<String>) -> Check {
    Err((key.into(), msg.into()))
}

pub fn validate(s: &Scenario) -> Check {
    let topo = Topology::build(&s.topology)?;
    let hosts = topo.num_hosts;

    if s.simulation.stop_time == Some(crate::time::SimTime::ZERO) {
        return fail("simulation.stop_time", "must be positive, e.g. \"10ms\"");
    }

    // NIC and packet format.
    let nic = &s.nic;
    let longest_rto = crate::time::SimTime(nic.rto.0.saturating_mul(super::MAX_RTO_BACKOFF as u64));
    if let Some(stall) = s.simulation.stall_timeout {
        // (A timeout so long that it saturates the clock leaves only "never" as a stall timeout.)
        if stall <= longest_rto && stall < crate::time::SimTime::MAX {
            return fail(
                "simulation.stall_timeout",
                format!(
                    "{stall} would call a flow waiting out its retransmission timeout stalled: make it longer than nic.rto x {} = {longest_rto}",
                    super::MAX_RTO_BACKOFF
                ),
            );
        }
    }
    if nic.mtu.0 == 0 || nic.mtu.0 > 65_536 {
        return fail("nic.mtu", format!("payload per packet must be 1B..64KiB, got {}", nic.mtu));
    }
    for (key, v) in [
        ("nic.header", nic.header),
        ("nic.ack_size", nic.ack_size),
        ("nic.cnp_size", nic.cnp_size),
        ("nic.pause_size", nic.pause_size),
    ] {
        if v.0 == 0 || v.0 > 4096 {
            return fail(key, format!("must be 1B..4096B, got {v}"));
        }
    }
    if nic.ack_every == 0 {
        return fail("nic.ack_every", "must be at least 1 (ACK every packet)");
    }
    if nic.rto.0 == 0 {
        return fail("nic.rto", "the retransmission timeout must be positive, e.g. \"1ms\"");
    }
    if nic.data_priority > 6 {
        return fail(
            "nic.data_priority",
            format!("must be 0..=6 (7 is the control priority), got {}", nic.data_priority),
        );
    }

    for (key, v) in [("clocks.offset", s.clocks.offset), ("clocks.noise", s.clocks.noise)] {
        if v > crate::time::SimTime::from_ms(1000) {
            return fail(key, format!("{v} is more than a second; clock errors are nanoseconds to microseconds"));
        }
    }

    // The algorithm first: its telemetry header is part of every data packet.
    s.cc.validate(&topo)?;

    // Switch buffer, PFC, ECN.
    let sw = &s.switch;
    let max_packet = nic.mtu.0 + nic.header.0 + s.cc.extra_header_bytes().0;
    if sw.buffer.0 < max_packet {
        return fail("switch.buffer", format!("{} is smaller than one packet ({max_packet} B)", sw.buffer));
    }
    if let Some(xoff) = sw.pfc.xoff {
        if xoff.0 > sw.buffer.0 {
            return fail("switch.pfc.xoff", format!("{xoff} is above the buffer size {}", sw.buffer));
        }
        if sw.pfc.xon_delta.0 >= xoff.0 {
            return fail("switch.pfc.xon_delta", format!("must be below xoff ({xoff}), got {}", sw.pfc.xon_delta));
        }
    }
    if sw.pfc.enabled && sw.pfc.xoff.is_none() {
        for s in 0..topo.num_switches {
            let node = topo.num_hosts + s;
            let reserved =
                crate::engine::net::switch::total_headroom(&topo, node, &sw.pfc, max_packet, nic.pause_size.0);
            if reserved >= sw.buffer.0 {
                let ports = topo.node_ports[node as usize].len();
                return fail(
                    "switch.pfc.headroom",
                    format!(
                        "switch {s} reserves {} of headroom over its {ports} ports, leaving nothing of its {} buffer to share; raise switch.buffer or lower switch.pfc.headroom",
                        crate::time::format_bytes(reserved),
                        sw.buffer
                    ),
                );
            }
        }
    }
    if !(sw.pfc.dynamic_alpha > 0.0 && sw.pfc.dynamic_alpha <= 64.0) {
        return fail("switch.pfc.dynamic_alpha", format!("must be in (0, 64], got {}", sw.pfc.dynamic_alpha));
    }
    if let Some(h) = sw.pfc.headroom {
        if h.0 >= sw.buffer.0 {
            return fail("switch.pfc.headroom", format!("{h} per port leaves no shared buffer of {}", sw.buffer));
        }
    }
    if sw.ecn.kmin > sw.ecn.kmax {
        return fail("switch.ecn.kmin", format!("kmin ({}) must not exceed kmax ({})", sw.ecn.kmin, sw.ecn.kmax));
    }
    if !(0.0..=1.0).contains(&sw.ecn.pmax) {
        return fail("switch.ecn.pmax", format!("a probability must be in [0, 1], got {}", sw.ecn.pmax));
    }

    // Workload.
    let host_ok = |key: &str, h: u32| -> Check {
        if h >= hosts {
            fail(key, format!("host {h} does not exist (the topology has hosts 0 to {})", hosts - 1))
        } else {
            Ok(())
        }
    };
    let set_ok = |key: &str, set: &HostSet, min: usize| -> Check {
        // Before expanding: "0..4000000000" would be 16 GB of host numbers.
        if let Some(top) = set.largest(hosts) {
            host_ok(key, top)?;
        }
        // Every member is at most the largest, checked above.
        let v = set.expand(hosts);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != v.len() {
            return fail(key, "lists a host twice");
        }
        if v.len() < min {
            return fail(key, format!("needs at least {min} hosts, got {}", v.len()));
        }
        Ok(())
    };
    match &s.workload {
        WorkloadConfig::Flows(FlowList { flows }) => {
            if flows.is_empty() {
                return fail("workload.flows", "the flow list is empty; add at least one { src, dst, size }");
            }
            for (i, f) in flows.iter().enumerate() {
                host_ok(&format!("workload.flows[{i}].src"), f.src)?;
                host_ok(&format!("workload.flows[{i}].dst"), f.dst)?;
                if f.src == f.dst {
                    return fail(format!("workload.flows[{i}].dst"), format!("host {} sends to itself", f.src));
                }
                if f.size.0 == 0 {
                    return fail(format!("workload.flows[{i}].size"), "a flow must carry at least 1 byte");
                }
                if let Some(c) = f.collective {
                    if c.group_size < 2 {
                        return fail(
                            format!("workload.flows[{i}].collective.group_size"),
                            "a collective needs at least 2 ranks",
                        );
                    }
                }
                if let Some(stop) = f.stop {
                    if stop <= f.start || !f.after.is_empty() {
                        return fail(
                            format!("workload.flows[{i}].stop"),
                            format!("must be after the flow's start ({}) and is not allowed with `after`", f.start),
                        );
                    }
                }
                if let Some(&bad) = f.after.iter().find(|&&d| d as usize >= i) {
                    return fail(
                        format!("workload.flows[{i}].after"),
                        format!("flow {bad} is not listed before flow {i}; `after` names earlier flows only (which also rules out cycles)"),
                    );
                }
            }
        }
        WorkloadConfig::Incast(IncastWorkload { senders, receiver, size, flows_per_sender, collective, .. }) => {
            host_ok("workload.receiver", *receiver)?;
            set_ok("workload.senders", senders, 1)?;
            if senders.expand(hosts).contains(receiver) {
                return fail(
                    "workload.senders",
                    format!("includes the receiver {receiver}, which would send to itself"),
                );
            }
            if size.0 == 0 {
                return fail("workload.size", "a flow must carry at least 1 byte");
            }
            if *flows_per_sender == 0 {
                return fail("workload.flows_per_sender", "must be at least 1");
            }
            if let Some(c) = collective {
                if c.group_size < 2 {
                    return fail("workload.collective.group_size", "a collective needs at least 2 ranks");
                }
            }
        }
        WorkloadConfig::AllToAll(AllToAllWorkload { hosts: set, size, .. })
        | WorkloadConfig::Permutation(PermutationWorkload { hosts: set, size, .. })
        | WorkloadConfig::AllReduce(AllReduceWorkload { hosts: set, size, .. }) => {
            set_ok("workload.hosts", set, 2)?;
            if size.0 == 0 {
                return fail("workload.size", "a flow must carry at least 1 byte");
            }
            if let WorkloadConfig::AllToAll(a) = &s.workload {
                if a.flows_per_pair == 0 {
                    return fail("workload.flows_per_pair", "must be at least 1");
                }
                if a.flows_per_pair > 1 && a.algorithm != super::AllToAllAlgorithm::Direct {
                    return fail(
                        "workload.flows_per_pair",
                        "several flows per pair need algorithm = \"direct\" (pairwise rounds carry one flow each)",
                    );
                }
            }
            if let WorkloadConfig::AllReduce(_) = &s.workload {
                let ranks = set.expand(hosts).len() as u64;
                if size.0 < ranks {
                    return fail(
                        "workload.size",
                        format!("{size} cannot be split into {ranks} chunks of at least 1 byte; raise the size"),
                    );
                }
            }
        }
        WorkloadConfig::Training(w) => training_ok(w, hosts, &set_ok)?,
    }

    let flows = crate::workload::count(&s.workload, hosts);
    if flows > MAX_FLOWS {
        let (key, fix) = match &s.workload {
            WorkloadConfig::Incast(_) => ("workload.flows_per_sender", "lower flows_per_sender or use fewer senders"),
            WorkloadConfig::AllToAll(a) if a.flows_per_pair > 1 => {
                ("workload.flows_per_pair", "lower flows_per_pair or use fewer hosts")
            }
            WorkloadConfig::Flows(_) => ("workload.flows", "split the list over several scenarios"),
            WorkloadConfig::Training(_) => ("workload.iterations", "lower iterations or use fewer ranks"),
            _ => ("workload.hosts", "use fewer hosts"),
        };
        return fail(
            key,
            format!("makes {flows} flows, more than the {MAX_FLOWS} aiccsim runs in one scenario; {fix}"),
        );
    }

    // Output.
    if let Some(iv) = s.output.sample_interval {
        if iv.0 == 0 {
            return fail("output.sample_interval", "must be positive, e.g. \"10us\"");
        }
    }
    // (A training workload without communication has no flows at all.)
    let no_such_flow = |bad: u32| match flows {
        0 => format!("flow {bad} does not exist (the workload has no flows)"),
        n => format!("flow {bad} does not exist (the workload has flows 0 to {})", n - 1),
    };
    if let Some(ids) = &s.output.rate_flows {
        if let Some(&bad) = ids.iter().find(|&&f| u64::from(f) >= flows) {
            return fail("output.rate_flows", no_such_flow(bad));
        }
    }
    if let Some(trace) = &s.output.trace {
        if let Some(ids) = &trace.flows {
            if let Some(&bad) = ids.iter().find(|&&f| u64::from(f) >= flows) {
                return fail("output.trace.flows", no_such_flow(bad));
            }
        }
        for (i, name) in trace.nodes.iter().flatten().enumerate() {
            crate::topology::parse_node(name, topo.num_hosts, topo.num_switches)
                .map_err(|m| (format!("output.trace.nodes[{i}]"), m))?;
        }
        if trace.max_rows == 0 {
            return fail("output.trace.max_rows", "must be at least 1 (leave out [output.trace] for no trace)");
        }
    }
    if let Some(sw) = &s.output.queue_switches {
        if let Some(&bad) = sw.iter().find(|&&x| x >= topo.num_switches) {
            return fail(
                "output.queue_switches",
                format!("switch {bad} does not exist (the topology has switches 0 to {})", topo.num_switches - 1),
            );
        }
    }
    // Last, once the fixed limits above (which hold on any machine) have passed: a run too big
    // for this machine is refused with its figures before the simulation allocates anything,
    // instead of being killed by the kernel later.
    let estimate = crate::estimate::estimate(s);
    if let Some(available) = crate::estimate::available_memory() {
        if estimate.memory_bytes() > available {
            return fail(
                estimate.largest_memory_part().key,
                format!(
                    "the run would need an estimated {} of memory, more than the {} this machine has available: simulate fewer hosts or flows, or sample timelines less often",
                    crate::estimate::Estimate::describe(&estimate.memory),
                    crate::estimate::human(available)
                ),
            );
        }
    }
    Ok(())
}

/// The `training` workload: its ranks, iterations and layers.
fn training_ok(w: &TrainingWorkload, hosts: u32, set_ok: &dyn Fn(&str, &HostSet, usize) -> Check) -> Check {
    set_ok("workload.hosts", &w.hosts, 2)?;
    if w.iterations == 0 {
        return fail("workload.iterations", "must be at least 1");
    }
    if w.layers.is_empty() {
        return fail(
            "workload.layers",
            "the model has no layers; add at least one [[workload.layers]] with forward and backward",
        );
    }
    let ranks = w.hosts.len(hosts);
    for (i, layer) in w.layers.iter().enumerate() {
        let key = |k: &str| format!("workload.layers[{i}].{k}");
        match (layer.backward, layer.input_grad, layer.weight_grad) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => {}
            (Some(_), _, _) => {
                return fail(
                    key("backward"),
                    "give either backward or its split into input_grad and weight_grad, not both",
                );
            }
            (None, None, None) => {
                return fail(
                    key("backward"),
                    "missing: give the backward compute time (e.g. backward = \"40us\"), or input_grad and weight_grad",
                );
            }
            (None, Some(_), None) => {
                return fail(
                    key("weight_grad"),
                    "input_grad needs weight_grad too (\"0us\" for a layer without weights)",
                );
            }
            (None, None, Some(_)) => {
                return fail(key("input_grad"), "weight_grad needs input_grad too (\"0us\" if it takes no time)");
            }
        }
        if let Some(ar) = layer.all_reduce {
            if ar.size.0 > 0 && ar.size.0 < ranks {
                return fail(
                    key("all_reduce.size"),
                    format!(
                        "{} cannot be split into {ranks} chunks of at least 1 byte; raise the size, or \"0B\" for no all-reduce",
                        ar.size
                    ),
                );
            }
        }
    }
    let steps = crate::workload::training::count_computes(w, hosts);
    if steps > MAX_COMPUTE_STEPS {
        return fail(
            "workload.iterations",
            format!(
                "makes {steps} compute steps (3 per layer, rank and iteration), more than the {MAX_COMPUTE_STEPS} aiccsim runs in one scenario; lower iterations or use fewer layers or ranks"
            ),
        );
    }
    Ok(())
}
