//! Scenario presets: `preset = "uec"` resolves to the Ultra Ethernet transport on a lossy fabric,
//! and the scenario's own keys win over it.

use crate::common;

const UEC_INCAST: &str = r#"
preset = "uec"
[topology]
kind = "fat_tree"
k = 4
link = { bandwidth = "400Gbps", delay = "1us" }
[workload]
kind = "incast"
senders = "1..=8"
receiver = 0
size = "512KB"
"#;

#[test]
fn the_uec_preset_resolves_to_nscc_reps_and_trimming_on_a_lossy_fabric() {
    let s = common::scenario(UEC_INCAST);
    let resolved = toml::to_string(&s).unwrap();
    for key in [
        "algorithm = \"nscc\"",
        "load_balancing = \"reps\"",
        "recovery = \"selective\"",
        "mtu = \"4096B\"",
        "threshold = \"628160B\"",
    ] {
        assert!(resolved.contains(key), "{key} not in\n{resolved}");
    }
    assert!(!s.switch.pfc.enabled, "a lossy fabric");
    assert!(!resolved.contains("preset = \"uec\""), "the resolved scenario shows keys, not the preset");
}

#[test]
fn a_uec_incast_trims_and_delivers_every_byte() {
    let r = common::run(UEC_INCAST);
    assert_eq!(r.summary.pause_frames, 0, "no PFC");
    assert_eq!(r.summary.packets_dropped, 0, "trimmed, not dropped");
    let trims: u64 = r.ports.iter().map(|p| p.trims).sum();
    assert!(trims > 0, "an 8-to-1 incast starting at 1.5 BDP each trims");
    assert_eq!(r.summary.nacks, trims, "every trim is NACKed once");
}

#[test]
fn the_scenarios_own_keys_win_over_the_preset() {
    let s = common::scenario(
        &UEC_INCAST.replace("[topology]", "[cc]\nalgorithm = \"dcqcn\"\n[nic]\nmtu = \"1000B\"\n[topology]"),
    );
    let resolved = toml::to_string(&s).unwrap();
    assert!(resolved.contains("algorithm = \"dcqcn\"") && resolved.contains("mtu = \"1KB\""), "{resolved}");
    assert!(resolved.contains("load_balancing = \"reps\""), "the rest of the preset stays");
}

#[test]
fn an_unknown_preset_is_an_error_naming_the_known_ones() {
    let err = aiccsim::Scenario::from_toml(&UEC_INCAST.replace("\"uec\"", "\"ib\""), "s.toml").unwrap_err();
    assert_eq!(err.key, "preset");
    assert!(err.to_string().contains("\"uec\""), "{err}");
}
