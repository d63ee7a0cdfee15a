//! The experiment table as `reproduce` prints it: the columns the experiment is about, in
//! blocks that fit a terminal. `table.csv` keeps every column; the terminal gets the ones the
//! experiment names (`columns` in experiment.toml) or, by default, those its claims and plot use.

/// The widest line printed: a terminal of 100 columns shows the table without wrapping.
pub const WIDTH: usize = 100;

/// Columns shown when an experiment names none and has no claims or bar plot to go by.
pub const DEFAULT_COLUMNS: [&str; 6] =
    ["finished", "completion_us", "p99_fct_us", "p99_slowdown", "pause_frames", "max_queue_kb"];

/// Indices of the columns to show: the first (the run's name), then `wanted` in order (each
/// once), leaving out a column empty in every row (the experiment does not measure it).
pub fn shown_columns(header: &[&str], rows: &[Vec<String>], wanted: &[&str]) -> Vec<usize> {
    let mut shown = vec![0];
    for name in wanted {
        let Some(i) = header.iter().position(|h| h == name) else { continue };
        if !shown.contains(&i) && rows.iter().any(|r| !r[i].is_empty()) {
            shown.push(i);
        }
    }
    shown
}

/// The columns `shown` of the table, right-aligned, as blocks of at most `width` characters a
/// line: each block starts with the first column again, so every row is named in every block.
/// (A first column wider than `width` alone gets one further column per block.)
pub fn render(header: &[&str], rows: &[Vec<String>], shown: &[usize], width: usize) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let col_width = |i: usize| widths[i];
    let (name, rest) = shown.split_first().map(|(n, r)| (*n, r)).unwrap_or((0, &[]));
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut used = col_width(name);
    for &i in rest {
        let w = col_width(i) + 2;
        match blocks.last_mut() {
            Some(block) if used + w <= width => block.push(i),
            _ => {
                blocks.push(vec![i]);
                used = col_width(name);
            }
        }
        used += w;
    }
    if blocks.is_empty() {
        blocks.push(Vec::new());
    }
    let mut out = String::new();
    for (b, block) in blocks.iter().enumerate() {
        if b > 0 {
            out.push('\n');
        }
        let cols: Vec<usize> = std::iter::once(name).chain(block.iter().copied()).collect();
        let mut line = |cells: Vec<&str>| {
            let parts: Vec<String> =
                cells.iter().zip(&cols).map(|(c, &i)| format!("{c:>w$}", w = col_width(i))).collect();
            out.push_str(&parts.join("  "));
            out.push('\n');
        };
        line(cols.iter().map(|&i| header[i]).collect());
        for r in rows {
            line(cols.iter().map(|&i| r[i].as_str()).collect());
        }
    }
    out
}

/// The width to print prose for (a check's claim and detail): the terminal's, on one;
/// otherwise 80 columns, the narrowest terminal in common use.
pub fn prose_width() -> usize {
    let term = console::Term::stdout();
    if term.is_term() {
        usize::from(term.size().1).max(40)
    } else {
        80
    }
}

/// `text` after `first` (on the first line) in lines of at most `width` characters, each
/// later one indented by `first`'s width, broken between words (a word wider than a line
/// keeps a line of its own).
pub fn wrap(first: &str, text: &str, width: usize) -> String {
    let indent = " ".repeat(first.chars().count());
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_is_wrapped_within_the_width_under_its_indent() {
        let detail = "pc4-n64 = 812.3 is below dcqcn-n64 = 1,502.7 by 46% (at least 10% needed), over the 45 runs named in the claim";
        let w = wrap("       ", detail, 80);
        assert!(w.lines().all(|l| l.chars().count() <= 80 && l.starts_with("       ")), "{w}");
        assert_eq!(w.split_whitespace().collect::<Vec<_>>(), detail.split_whitespace().collect::<Vec<_>>());
        assert_eq!(w.lines().count(), 2, "{w}");
        assert_eq!(wrap("  PASS ", "short", 80), "  PASS short\n");
        // A word wider than the line is not cut.
        assert_eq!(wrap("  ", &"x".repeat(90), 80), format!("  {}\n", "x".repeat(90)));
    }

    fn table() -> (Vec<&'static str>, Vec<Vec<String>>) {
        let header = vec!["scheme", "flows", "empty", "p99_fct_us", "pause_frames", "a_rather_long_column_name"];
        let row =
            |name: &str, n: &str| vec![name.into(), n.into(), String::new(), "12.5".into(), "0".into(), "1".into()];
        (header, vec![row("PC4 n=16", "16"), row("DCQCN vendor n=16", "16")])
    }

    #[test]
    fn shows_the_wanted_columns_once_in_order_without_empty_ones() {
        let (header, rows) = table();
        let shown = shown_columns(&header, &rows, &["p99_fct_us", "empty", "flows", "p99_fct_us", "nonesuch"]);
        assert_eq!(shown, [0, 3, 1]);
    }

    #[test]
    fn a_wide_table_is_split_into_blocks_that_fit_each_naming_the_rows() {
        let (header, rows) = table();
        let all: Vec<usize> = (0..header.len()).collect();
        let wide = render(&header, &rows, &all, 1000);
        assert_eq!(wide.lines().count(), 3, "one block:\n{wide}");
        let narrow = render(&header, &rows, &all, 60);
        for line in narrow.lines() {
            assert!(line.chars().count() <= 60, "{line:?} is wider than 60");
        }
        let blocks: Vec<&str> = narrow.split("\n\n").collect();
        assert!(blocks.len() >= 2, "{narrow}");
        for b in &blocks {
            assert!(b.starts_with("           scheme"), "every block names its rows:\n{b}");
            assert!(b.contains("DCQCN vendor n=16"));
        }
        // Every shown column appears exactly once over the blocks.
        for h in &header[1..] {
            assert_eq!(narrow.matches(h).count(), 1, "{h} in\n{narrow}");
        }
    }
}
