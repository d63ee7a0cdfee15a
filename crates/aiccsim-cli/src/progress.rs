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
                0 => ProgressBar::new_spinner()
                    .with_style(ProgressStyle::with_template("{prefix} {spinner} {msg} ({elapsed})").expect("valid")),
                n => ProgressBar::new(n).with_style(
                    ProgressStyle::with_template("{prefix} {msg} {bar:24} {pos}/{len} ({elapsed}, ETA {eta})")
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
/// are none), and [`run_message`].
pub struct RunBar {
    label: String,
    quiet: bool,
    started: Instant,
    ideal: SimTime,
    bar: Option<ProgressBar>,
}

impl RunBar {
    /// `ideal`: the shortest the run can take (`aiccsim::estimate`'s ideal duration).
    pub fn new(label: &str, quiet: bool, ideal: SimTime) -> RunBar {
        // Only decides when the bar appears and what it says; the run does not see it.
        #[allow(clippy::disallowed_methods)]
        let started = Instant::now();
        RunBar { label: label.to_string(), quiet, started, ideal, bar: None }
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
            let b = ProgressBar::new(total)
                .with_style(ProgressStyle::with_template("{prefix} {bar:24} {percent:>3}% {msg}").expect("valid"));
            b.set_prefix(self.label.clone());
            b
        });
        bar.set_position(done);
        bar.set_message(run_message(p, elapsed, self.ideal));
    }

    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// What the run's bar says after `elapsed` of wall time: how much is delivered, where simulated
/// time is against the ideal end, how fast simulated time and events go, and when the run
/// should end at the pace so far.
pub fn run_message(p: &Progress, elapsed: Duration, ideal: SimTime) -> String {
    let wall = elapsed.as_secs_f64();
    let mut parts = Vec::new();
    if p.bytes_total > 0 {
        parts.push(format!(
            "{} of {} delivered",
            aiccsim::estimate::human(u128::from(p.bytes_delivered)),
            aiccsim::estimate::human(u128::from(p.bytes_total))
        ));
    } else {
        parts.push(format!("{}/{} flows", p.flows_done, p.flows_total));
    }
    let ideal_note = if ideal > SimTime::ZERO { format!(" (ideal end {})", sim_time(ideal)) } else { String::new() };
    parts.push(format!("t={}{ideal_note}", sim_time(p.now)));
    if wall > 0.0 {
        let per_second = SimTime((p.now.0 as f64 / wall) as u64);
        parts.push(format!("{}/s simulated", sim_time(per_second)));
        parts.push(format!("{:.2} M events/s", p.events as f64 / wall / 1e6));
    }
    let fraction = match p.bytes_total {
        0 => 0.0,
        total => p.bytes_delivered as f64 / total as f64,
    };
    // The pace so far: a run's rate of delivery changes (a slow start, a straggler), so this is
    // a guide; nothing better is known before the run ends.
    if fraction > 0.0 && fraction < 1.0 {
        parts.push(format!("ETA {}", wall_time(wall * (1.0 - fraction) / fraction)));
    }
    parts.join(", ")
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
fn wall_time(seconds: f64) -> String {
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
    fn the_run_message_shows_bytes_time_rates_and_eta() {
        // A quarter delivered in 2 s: 6 s to go at that pace.
        let m = run_message(&progress(400, 40_000_000, 160_000_000), Duration::from_secs(2), SimTime::from_us(1280));
        assert_eq!(
            m,
            "40.0 MB of 160.0 MB delivered, t=400.0 us (ideal end 1.280 ms), 200.0 us/s simulated, 1.50 M events/s, ETA 6s"
        );
    }

    #[test]
    fn without_bytes_it_counts_flows_and_gives_no_eta() {
        let m = run_message(&progress(2_500_000, 0, 0), Duration::from_secs(100), SimTime::ZERO);
        assert_eq!(m, "0/16 flows, t=2.500 s, 25.000 ms/s simulated, 0.03 M events/s");
        // Nothing delivered yet: no pace to go by.
        assert!(!run_message(&progress(1, 0, 10), Duration::from_secs(1), SimTime::ZERO).contains("ETA"));
    }

    #[test]
    fn wall_times_read_in_the_largest_units() {
        assert_eq!(wall_time(44.6), "45s");
        assert_eq!(wall_time(725.0), "12m 05s");
        assert_eq!(wall_time(12_000.0), "3h 20m");
        assert_eq!(sim_time(SimTime::from_ns(850)), "850 ns");
    }
}
