//! SVG line plots (plotters' SVG backend: no fonts or system libraries needed).

use plotters::prelude::*;
use std::path::Path;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Twelve colours that stay apart on a white background (Tableau 10, then two darker ones).
const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(0, 80, 60),
];

/// One line per series on shared axes.
pub fn lines(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<(), String> {
    let (mut x_max, mut y_max) = (0.0f64, 0.0f64);
    for s in series {
        for &(x, y) in &s.points {
            x_max = x_max.max(x);
            y_max = y_max.max(y);
        }
    }
    let x_max = if x_max > 0.0 { x_max } else { 1.0 };
    let y_max = if y_max > 0.0 { y_max * 1.05 } else { 1.0 };
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| e.to_string())?;
    chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().map_err(|e| e.to_string())?;
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// Horizontal bars, one per (name, value), top to bottom in the given order. Runs named as one
/// series of a sweep ("PC4 n=2", "PC4 n=3", ...: the same words before the last one) share a
/// colour, so that each scheme reads as one colour down a long chart.
pub fn bars(path: &Path, title: &str, x_label: &str, bars: &[(String, f64)]) -> Result<(), String> {
    let rows: Vec<(String, Vec<f64>)> = bars.iter().map(|(name, v)| (name.clone(), vec![*v])).collect();
    let colours = series_colours(bars.iter().map(|(name, _)| name.as_str()));
    horizontal(path, title, x_label, &rows, None, |row, _| colours[row])
}

/// A colour per name: by series (the name without its last word) where some series has more
/// than one member, else one colour per name.
fn series_colours<'a>(names: impl Iterator<Item = &'a str>) -> Vec<RGBColor> {
    let names: Vec<&str> = names.collect();
    let series: Vec<&str> = names.iter().map(|n| n.rsplit_once(' ').map_or(*n, |(head, _)| head)).collect();
    let mut order: Vec<&str> = Vec::new();
    for s in &series {
        if !order.contains(s) {
            order.push(s);
        }
    }
    if order.len() == names.len() {
        return (0..names.len()).map(|i| PALETTE[i % PALETTE.len()]).collect();
    }
    series.iter().map(|s| PALETTE[order.iter().position(|o| o == s).unwrap_or(0) % PALETTE.len()]).collect()
}

/// One horizontal bar per row, made of segments (`parts` names them, in the legend) laid end to
/// end: a stacked bar chart, rows from the top.
pub fn stacked_bars(
    path: &Path,
    title: &str,
    x_label: &str,
    parts: &[&str],
    rows: &[(String, Vec<f64>)],
) -> Result<(), String> {
    horizontal(path, title, x_label, rows, Some(parts), |_, part| PALETTE[part % PALETTE.len()])
}

/// Horizontal bars, one row each (from the top), each made of its values laid end to end in
/// `colour(row, part)`; with `legend`, the parts' names.
fn horizontal(
    path: &Path,
    title: &str,
    x_label: &str,
    rows: &[(String, Vec<f64>)],
    legend: Option<&[&str]>,
    colour: impl Fn(usize, usize) -> RGBColor,
) -> Result<(), String> {
    let n = rows.len().max(1);
    let x_max = rows.iter().map(|r| r.1.iter().sum::<f64>()).fold(0.0f64, f64::max);
    // Room on the right for the legend, clear of the longest bar.
    let room = if legend.is_some() { 1.4 } else { 1.08 };
    let x_max = if x_max > 0.0 { x_max * room } else { 1.0 };
    let name_chars = rows.iter().map(|r| r.0.len()).max().unwrap_or(4) as u32;
    let height = 90 + if legend.is_some() { 20 } else { 0 } + 26 * n as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(20 + 7 * name_chars)
        .build_cartesian_2d(0.0..x_max, (0..n).into_segmented())
        .map_err(|e| e.to_string())?;
    let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => n.checked_sub(1 + i).and_then(|k| names.get(k)).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc(x_label)
        .draw()
        .map_err(|e| e.to_string())?;
    let parts = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for p in 0..parts {
        let drawn = chart
            .draw_series(rows.iter().enumerate().filter(|(_, (_, v))| p < v.len()).map(|(i, (_, values))| {
                let row = n - 1 - i;
                let from: f64 = values[..p].iter().sum();
                let mut r = Rectangle::new(
                    [(from, SegmentValue::Exact(row)), (from + values[p], SegmentValue::Exact(row + 1))],
                    colour(i, p).mix(0.8).filled(),
                );
                r.set_margin(3, 3, 0, 0);
                r
            }))
            .map_err(|e| e.to_string())?;
        if let Some(name) = legend.and_then(|names| names.get(p)) {
            let c = colour(0, p);
            drawn.label(*name).legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.mix(0.8).filled()));
        }
    }
    if legend.is_some() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_of_one_series_share_a_colour() {
        let c = series_colours(["PC4 n=2", "DCQCN n=2", "PC4 n=3", "DCQCN n=3"].into_iter());
        assert_eq!((c[0], c[1]), (c[2], c[3]));
        assert_ne!(c[0], c[1]);
        let c = series_colours(["PFC only", "DCQCN", "HPCC"].into_iter());
        assert!(c[0] != c[1] && c[1] != c[2], "no series: a colour each");
    }
}
