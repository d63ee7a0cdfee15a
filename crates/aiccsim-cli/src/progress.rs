//! What the command shows while it works: a bar for each long phase of building a run, then one
//! for the simulation.
//!
//! A bar appears only once its phase (or the run) has taken a second, so that short runs print
//! nothing but their summary, and never with `--quiet`. Bars go to stderr, drawn only on a
//! terminal (indicatif's default), so piped output stays clean.

use aiccsim::time::SimTime;
use aiccsim::watch::Phase;
use aiccsim::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::time::{Duration, Instant};

/// How long a phase or run goes before its bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// The bar of the phase under way while a run is built.
pub struct Phases {
    label: String,
    quiet: bool,
    current: Option<(Phase, Instant)>,
    bar: Option<ProgressBar>,
}

impl Phases {
    pub fn new(label: &str, quiet: bool) -> Phases {
        Phases { label: label.to_string(), quiet, current: None, bar: None }
    }

    /// `phase` is at `done` of `total` (0: not known).
    pub fn observe(&mut self, phase: Phase, done: u64, total: u64) {
        if self.quiet {
            return;
        }
        let started = match self.current {
            Some((p, started)) if p == phase => started,
            _ => {
                self.finish();
                // Only decides when a bar appears; what is built never depends on it.
                #[allow(clippy::disallowed_methods)]
                let now = Instant::now();
                self.current = Some((phase, now));
                now
            }
        };
        if self.bar.is_none() && started.elapsed() >= SHOW_AFTER {
            let bar = match total {
                0 => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{prefix} {spinner} ({elapsed}) {wide_msg}").expect("valid"),
                ),
                n => ProgressBar::new(n).with_style(
                    ProgressStyle::with_template("{prefix} {msg} {wide_bar} {pos}/{len} ({elapsed}, ETA {eta})")
                        .expect("valid"),
                ),
            };
            bar.set_prefix(self.label.clone());
            bar.set_message(phase.describe());
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// Clears the bar of the phase that ended.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.current = None;
    }
}

/// The simulation's bar: bytes delivered of all the flows' bytes (flows finished when there
/// are none), and [`run_message`], fitted to the terminal's width.
pub struct RunBar {
    label: String,
    quiet: bool,
    started: Instant,
    bar: Option<ProgressBar>,
}

/// What the bar itself takes of a line besides its label: " [bar] 100% ".
const BAR_COLUMNS: usize = 1 + 16 + 1 + 4 + 1;

/// An ETA is shown once this share of the bytes is delivered and this much wall time has
/// passed: before that, the pace (flows still starting, windows still opening) says little
/// about the rest, and an early ETA can be hundreds of times too long.
const ETA_AFTER_FRACTION: f64 = 0.03;
const ETA_AFTER: Duration = Duration::from_secs(5);

impl RunBar {
    pub fn new(label: &str, quiet: bool) -> RunBar {
        // Only decides when the bar appears and what it says; the run does not see it.
        #[allow(clippy::disallowed_methods)]
        let started = Instant::now();
        RunBar { label: label.to_string(), quiet, started, bar: None }
    }

    pub fn observe(&mut self, p: &Progress) {
        let elapsed = self.started.elapsed();
        if self.quiet || elapsed < SHOW_AFTER {
            return;
        }
        let (done, total) = match p.bytes_total {
            0 => (p.flows_done as u64, p.flows_total as u64),
            total => (p.bytes_delivered, total),
        };
        let bar = self.bar.get_or_insert_with(|| {
            // `wide_msg` cuts what is still too wide: the line never wraps.
            let b = ProgressBar::new(total)
                .with_style(ProgressStyle::with_template("{prefix} {bar:16} {percent:>3}% {wide_msg}").expect("valid"));
            b.set_prefix(self.label.clone());
            b
        });
        bar.set_position(done);
        // indicatif's estimate follows the recent pace, not the average since the start.
        let fraction = if total == 0 { 0.0 } else { done as f64 / total as f64 };
        let eta = (p.bytes_total > 0 && fraction >= ETA_AFTER_FRACTION && elapsed >= ETA_AFTER && fraction < 1.0)
            .then(|| bar.eta());
        let width = usize::from(console::Term::stderr().size().1);
        let room = width.saturating_sub(self.label.chars().count() + BAR_COLUMNS);
        bar.set_message(run_message(p, elapsed, eta, room));
    }

    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// What the run's bar says after `elapsed` of wall time, in at most `width` characters: the
/// time to go (`eta`, when known), how much is delivered, where simulated time is, and how
/// fast simulated time and events go; the parts that do not fit are left out, the last first.
pub fn run_message(p: &Progress, elapsed: Duration, eta: Option<Duration>, width: usize) -> String {
    let wall = elapsed.as_secs_f64();
    let mut parts = Vec::new();
    if let Some(eta) = eta {
        parts.push(format!("ETA {}", wall_time(eta.as_secs_f64())));
    }
    if p.bytes_total > 0 {
        parts.push(format!(
            "{} of {}",
            aiccsim::estimate::human(u128::from(p.bytes_delivered)),
            aiccsim::estimate::human(u128::from(p.bytes_total))
        ));
    } else {
        parts.push(format!("{}/{} flows", p.flows_done, p.flows_total));
    }
    parts.push(format!("t={}", sim_time(p.now)));
    if wall > 0.0 {
        let per_second = SimTime((p.now.0 as f64 / wall) as u64);
        parts.push(format!("{}/s simulated", sim_time(per_second)));
        parts.push(format!("{:.2} M events/s", p.events as f64 / wall / 1e6));
    }
    let mut line = String::new();
    for part in parts {
        let sep = if line.is_empty() { "" } else { ", " };
        if line.chars().count() + sep.len() + part.chars().count() > width {
            break;
        }
        line.push_str(sep);
        line.push_str(&part);
    }
    line
}

/// Simulated time in the unit that reads best: "850 ns", "12.5 us", "1.234 ms", "2.500 s".
fn sim_time(t: SimTime) -> String {
    let ns = t.as_ns_f64();
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// Wall time to go: "45s", "12m 05s", "3h 20m".
pub fn wall_time(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(now_us: u64, delivered: u64, total: u64) -> Progress {
        Progress {
            now: SimTime::from_us(now_us),
            flows_done: 0,
            flows_total: 16,
            events: 3_000_000,
            bytes_delivered: delivered,
            bytes_total: total,
            ended: false,
        }
    }

    #[test]
    fn the_run_message_shows_eta_bytes_time_and_rates() {
        let m = run_message(
            &progress(400, 40_000_000, 160_000_000),
            Duration::from_secs(2),
            Some(Duration::from_secs(6)),
            200,
        );
        assert_eq!(m, "ETA 6s, 40.0 MB of 160.0 MB, t=400.0 us, 200.0 us/s simulated, 1.50 M events/s");
    }

    #[test]
    fn without_bytes_it_counts_flows() {
        let m = run_message(&progress(2_500_000, 0, 0), Duration::from_secs(100), None, 200);
        assert_eq!(m, "0/16 flows, t=2.500 s, 25.000 ms/s simulated, 0.03 M events/s");
    }

    /// In an 80-column terminal the whole line, label and bar included, fits: the parts that
    /// do not are left out, the least useful first, and the ETA stays.
    #[test]
    fn the_line_fits_an_80_column_terminal() {
        let label = "run 3/45 dcqcn-n64";
        let room = 80 - label.len() - BAR_COLUMNS;
        let p = progress(123_456_789, 40_000_000_000, 160_000_000_000);
        let m = run_message(&p, Duration::from_secs(3_000), Some(Duration::from_secs(9_000)), room);
        assert!(label.len() + BAR_COLUMNS + m.chars().count() <= 80, "{m}");
        assert!(m.starts_with("ETA 2h 30m, 40.0 GB of 160.0 GB"), "{m}");
        assert!(!m.contains("events/s"), "{m}");
        // Nothing fits in no room at all.
        assert_eq!(run_message(&p, Duration::from_secs(1), None, 0), "");
    }

    /// The ETA waits for a share of the bytes and a few seconds: early on, a run's pace says
    /// little about its end.
    #[test]
    fn no_eta_before_it_means_something() {
        let mut bar = RunBar::new("r", false);
        bar.started -= Duration::from_secs(2);
        // Hidden (not a terminal) but still measured: no ETA at 1% of the bytes.
        bar.observe(&progress(10, 1, 100));
        let b = bar.bar.as_ref().unwrap();
        assert!(!b.message().contains("ETA"), "{}", b.message());
        bar.started -= Duration::from_secs(10);
        bar.observe(&progress(20, 50, 100));
        assert!(bar.bar.as_ref().unwrap().message().starts_with("ETA"), "{}", bar.bar.as_ref().unwrap().message());
    }

    #[test]
    fn wall_times_read_in_the_largest_units() {
        assert_eq!(wall_time(44.6), "45s");
        assert_eq!(wall_time(725.0), "12m 05s");
        assert_eq!(wall_time(12_000.0), "3h 20m");
        assert_eq!(sim_time(SimTime::from_ns(850)), "850 ns");
    }
}
