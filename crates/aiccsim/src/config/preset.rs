//! Scenario presets: `preset = "uec"` at the top of a scenario gives the defaults a family of
//! fabrics ships with, in one line, and every key the scenario writes itself wins over them (a
//! table is merged key by key; anything else is replaced).
//!
//! Presets are scenario text, so that what one sets is read, checked and resolved as the same
//! keys written by hand would be: the resolved scenario (`run.json`, `scenario.toml`) shows
//! them, not the preset's name.

/// A preset: its name, what it is, and the scenario keys it sets.
pub struct Preset {
    pub name: &'static str,
    pub describe: &'static str,
    pub keys: &'static str,
}

/// The Ultra Ethernet transport on a lossy fabric, as the UEC's htsim runs it by default
/// (ultraethernet/uet-htsim, `htsim_uec`: NSCC, REPS, trimming; tests/uet_htsim/README.md has
/// its defaults with their lines). Sized for its reference network, 400 Gbps links and a round
/// trip of 12.5 us (a three-tier fat tree of 1 us links): the trimming threshold is one
/// bandwidth-delay product of it, as the reference's per-port data queue; ECN marks from 0.2 to
/// 0.8 of it, scaled to each port's speed, on dequeue, as the reference's RED does. The
/// receiver ACKs every 16384 B (`UecSink::_bytes_unacked_threshold`: 4 packets) and at once on
/// the reference's AR rules (`ack_request`); a packet after a gap is acknowledged by the same
/// rules, each ACK naming every packet held (`ack_out_of_order`: `UecSink::processData` has no
/// ACK of its own for it), and the sender times out after 90.4 us of no progress
/// (`main_uec.cpp`: 15 us + the data queue's 628160 B x 6 x 8 / 400 Gbps). The timeout
/// is what ends a stall coalescing makes: an ACK that shrinks the window below the packets out,
/// none of which asked for an ACK, leaves them waiting for it (with the NIC's 67 ms default, a
/// k = 8 all-to-all with a slow link took 67 ms instead of 0.46). On a lossless fabric the same
/// 90 us fires behind PFC pauses with nothing lost: that is the reference's transport there.
const UEC: &str = r#"
[switch]
pfc = { enabled = false }
trimming = { threshold = "628160B", header = "64B" }
ecn = { kmin = "128960B", kmax = "503360B", pmax = 1.0, reference_bandwidth = "400Gbps", mark_at = "dequeue" }

[nic]
mtu = "4096B"
header = "64B"
ack_size = "64B"
ack_every = 4
ack_request = true
ack_out_of_order = "coalesced"
rto = "90379.2ns"
recovery = "selective"
load_balancing = "reps"

[cc]
algorithm = "nscc"
"#;

pub const PRESETS: &[Preset] = &[Preset {
    name: "uec",
    describe: "the Ultra Ethernet transport on a lossy fabric, as the UEC's htsim runs it: NSCC, REPS, packet trimming, selective recovery, no PFC, 4 KB packets",
    keys: UEC,
}];

/// The scenario table `table` with its `preset`, if it names one, applied under it: the preset's
/// keys where the scenario has none. `Err` is (key, message).
pub fn apply(table: &mut toml::Table) -> Result<(), (String, String)> {
    let Some(name) = table.remove("preset") else { return Ok(()) };
    let names = || PRESETS.iter().map(|p| format!("\"{}\"", p.name)).collect::<Vec<_>>().join(", ");
    let Some(name) = name.as_str().map(str::to_owned) else {
        return Err(("preset".into(), format!("expected a preset's name ({}), got {name}", names())));
    };
    let Some(preset) = PRESETS.iter().find(|p| p.name == name) else {
        return Err(("preset".into(), format!("unknown preset \"{name}\"; presets: {}", names())));
    };
    let mut merged: toml::Table = preset.keys.parse().expect("a preset is valid TOML");
    merge(&mut merged, std::mem::take(table));
    *table = merged;
    Ok(())
}

/// `over`'s keys onto `base`: tables merged key by key, anything else replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenarios_own_keys_win_and_tables_merge_key_by_key() {
        let mut t: toml::Table =
            "preset = \"uec\"\n[nic]\nmtu = \"1000B\"\n[cc]\nalgorithm = \"dcqcn\"".parse().unwrap();
        apply(&mut t).unwrap();
        assert!(!t.contains_key("preset"));
        let nic = t["nic"].as_table().unwrap();
        assert_eq!(nic["mtu"].as_str(), Some("1000B"), "the scenario's mtu");
        assert_eq!(nic["load_balancing"].as_str(), Some("reps"), "the preset's load balancing");
        assert_eq!(t["cc"]["algorithm"].as_str(), Some("dcqcn"));
        assert_eq!(t["switch"]["pfc"]["enabled"].as_bool(), Some(false));
    }

    #[test]
    fn a_scenario_without_a_preset_is_left_as_it_is() {
        let mut t: toml::Table = "[nic]\nmtu = \"1000B\"".parse().unwrap();
        let before = t.clone();
        apply(&mut t).unwrap();
        assert_eq!(t, before);
    }

    #[test]
    fn an_unknown_preset_names_the_known_ones() {
        let mut t: toml::Table = "preset = \"ib\"".parse().unwrap();
        let (key, message) = apply(&mut t).unwrap_err();
        assert_eq!(key, "preset");
        assert!(message.contains("\"uec\""), "{message}");
        let mut t: toml::Table = "preset = 3".parse().unwrap();
        assert!(apply(&mut t).unwrap_err().1.contains("expected a preset's name"));
    }
}
