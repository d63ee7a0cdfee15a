//! An experiment's claims, checked against its table.
//!
//! Each `[[check]]` of `experiment.toml` states one thing the published result says and names
//! the table column (`metric`) and runs it is about; `reproduce` evaluates every check on the
//! measured table, prints PASS or FAIL with the numbers, and writes them to `checks.csv`.
//! ```toml
//! [[check]]
//! claim = "PFC-only sends the most PAUSE frames"
//! metric = "pause_frames"
//! runs = ["PFC only"]
//! rule = "max"                 # max | min | at_most | at_least | below | above | within
//! ```
//! - `max` / `min`: each listed run holds the largest / smallest value among `among` (default:
//!   every run);
//! - `at_most` / `at_least`: each listed run's value is at most / at least `value`;
//! - `below`: each listed run's value is at most `factor` (default 1) times the smallest value
//!   of the runs in `than`; `above`: more than that;
//! - `within`: the listed runs are within `value` of each other, as a fraction of the smallest.

use serde::Deserialize;

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Max,
    Min,
    AtMost,
    AtLeast,
    Below,
    Above,
    Within,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub claim: String,
    pub metric: String,
    pub runs: Vec<String>,
    pub rule: Rule,
    #[serde(default)]
    pub among: Vec<String>,
    #[serde(default)]
    pub than: Vec<String>,
    pub value: Option<f64>,
    pub factor: Option<f64>,
}

/// The outcome of one check: whether it holds and the numbers it was judged on.
pub struct Verdict {
    pub claim: String,
    pub pass: bool,
    pub detail: String,
}

/// A table as the checks see it: run names and, per column, a number where the cell is one.
pub struct Measured<'a> {
    pub header: &'a [&'static str],
    pub rows: &'a [Vec<String>],
}

impl Measured<'_> {
    fn value(&self, run: &str, metric: &str) -> Result<f64, String> {
        let col = self
            .header
            .iter()
            .position(|h| *h == metric)
            .ok_or_else(|| format!("no column '{metric}' (columns: {})", self.header.join(", ")))?;
        let row = self.rows.iter().find(|r| r[0] == run).ok_or_else(|| format!("no run named '{run}'"))?;
        row[col].parse::<f64>().map_err(|_| format!("run '{run}' has no number in '{metric}' ('{}')", row[col]))
    }

    fn all_runs(&self) -> Vec<String> {
        self.rows.iter().map(|r| r[0].clone()).collect()
    }
}

/// Checks the names and parameters of a check before any run starts.
pub fn validate(c: &Check, runs: &[String], columns: &[&str]) -> Result<(), String> {
    let known = |names: &[String], key: &str| -> Result<(), String> {
        match names.iter().find(|n| !runs.contains(n)) {
            Some(bad) => {
                Err(format!("check '{}': {key} names run '{bad}', which the experiment does not have", c.claim))
            }
            None => Ok(()),
        }
    };
    known(&c.runs, "runs")?;
    known(&c.among, "among")?;
    known(&c.than, "than")?;
    if !columns.contains(&c.metric.as_str()) {
        return Err(format!("check '{}': no table column '{}' (columns: {})", c.claim, c.metric, columns.join(", ")));
    }
    if c.runs.is_empty() {
        return Err(format!("check '{}': list the runs it is about in `runs`", c.claim));
    }
    let needs = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("check '{}': rule {:?} needs {what}", c.claim, c.rule))
        }
    };
    match c.rule {
        Rule::AtMost | Rule::AtLeast | Rule::Within => needs(c.value.is_some(), "`value`"),
        Rule::Below | Rule::Above => needs(!c.than.is_empty(), "`than`"),
        Rule::Max | Rule::Min => Ok(()),
    }
}

pub fn evaluate(c: &Check, t: &Measured) -> Verdict {
    let result = (|| -> Result<(bool, String), String> {
        let vals: Vec<(String, f64)> =
            c.runs.iter().map(|r| Ok((r.clone(), t.value(r, &c.metric)?))).collect::<Result<_, String>>()?;
        let shown = |v: &[(String, f64)]| v.iter().map(|(n, x)| format!("{n} {x}")).collect::<Vec<_>>().join(", ");
        Ok(match c.rule {
            Rule::Max | Rule::Min => {
                let among = if c.among.is_empty() { t.all_runs() } else { c.among.clone() };
                let others: Vec<(String, f64)> = among
                    .iter()
                    .filter(|r| !c.runs.contains(r))
                    .map(|r| Ok((r.clone(), t.value(r, &c.metric)?)))
                    .collect::<Result<_, String>>()?;
                let pass = vals
                    .iter()
                    .all(|(_, v)| others.iter().all(|(_, o)| if c.rule == Rule::Max { v > o } else { v < o }));
                (pass, format!("{}; others: {}", shown(&vals), shown(&others)))
            }
            Rule::AtMost => {
                let limit = c.value.unwrap_or(0.0);
                (vals.iter().all(|(_, v)| *v <= limit), format!("{} (limit {limit})", shown(&vals)))
            }
            Rule::AtLeast => {
                let limit = c.value.unwrap_or(0.0);
                (vals.iter().all(|(_, v)| *v >= limit), format!("{} (at least {limit})", shown(&vals)))
            }
            Rule::Below | Rule::Above => {
                let than: Vec<(String, f64)> =
                    c.than.iter().map(|r| Ok((r.clone(), t.value(r, &c.metric)?))).collect::<Result<_, String>>()?;
                let factor = c.factor.unwrap_or(1.0);
                let bound = than.iter().map(|x| x.1).fold(f64::INFINITY, f64::min) * factor;
                let below = c.rule == Rule::Below;
                (
                    vals.iter().all(|(_, v)| if below { *v <= bound } else { *v > bound }),
                    format!("{} vs {factor} x min of {}", shown(&vals), shown(&than)),
                )
            }
            Rule::Within => {
                let lo = vals.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
                let hi = vals.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
                let spread = if hi == lo {
                    0.0
                } else if lo > 0.0 {
                    hi / lo - 1.0
                } else {
                    f64::INFINITY
                };
                let limit = c.value.unwrap_or(0.0);
                (
                    spread <= limit,
                    format!("spread {:.2}% (limit {:.2}%): {}", spread * 100.0, limit * 100.0, shown(&vals)),
                )
            }
        })
    })();
    match result {
        Ok((pass, detail)) => Verdict { claim: c.claim.clone(), pass, detail },
        Err(e) => Verdict { claim: c.claim.clone(), pass: false, detail: e },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> (Vec<&'static str>, Vec<Vec<String>>) {
        let rows =
            [("A", "10"), ("B", "0"), ("C", "3")].iter().map(|(n, v)| vec![n.to_string(), v.to_string()]).collect();
        (vec!["scheme", "pause_frames"], rows)
    }

    fn check(rule: Rule, runs: &[&str]) -> Check {
        Check {
            claim: "c".into(),
            metric: "pause_frames".into(),
            runs: runs.iter().map(|s| s.to_string()).collect(),
            rule,
            among: vec![],
            than: vec![],
            value: None,
            factor: None,
        }
    }

    #[test]
    fn rules_judge_the_numbers() {
        let (h, rows) = table();
        let t = Measured { header: &h, rows: &rows };
        assert!(evaluate(&check(Rule::Max, &["A"]), &t).pass);
        assert!(!evaluate(&check(Rule::Max, &["C"]), &t).pass);
        assert!(evaluate(&check(Rule::Min, &["B"]), &t).pass);
        let mut c = check(Rule::AtMost, &["B", "C"]);
        c.value = Some(3.0);
        assert!(evaluate(&c, &t).pass);
        c.value = Some(2.0);
        assert!(!evaluate(&c, &t).pass);
        let mut c = check(Rule::AtLeast, &["A", "C"]);
        c.value = Some(3.0);
        assert!(evaluate(&c, &t).pass);
        c.value = Some(4.0);
        assert!(!evaluate(&c, &t).pass);
        let mut c = check(Rule::Below, &["C"]);
        c.than = vec!["A".into()];
        c.factor = Some(0.5);
        assert!(evaluate(&c, &t).pass);
        c.factor = Some(0.2);
        assert!(!evaluate(&c, &t).pass);
        c.rule = Rule::Above;
        assert!(evaluate(&c, &t).pass, "C is more than 0.2 x A");
        c.factor = Some(0.5);
        assert!(!evaluate(&c, &t).pass);
        let mut c = check(Rule::Within, &["A", "C"]);
        c.value = Some(0.05);
        assert!(!evaluate(&c, &t).pass);
        let mut c = check(Rule::Within, &["B", "B"]);
        c.value = Some(0.0);
        assert!(evaluate(&c, &t).pass, "equal zeros are within any spread");
        let c = check(Rule::Max, &["Z"]);
        assert!(!evaluate(&c, &t).pass, "an unknown run fails, never passes");
    }
}
