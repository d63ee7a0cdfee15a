//! SVG plots for `reproduce` (plotters' SVG backend: no fonts or system libraries needed). Text
//! is sized to be read at the image's own size, and legends sit right of the plot, clear of the
//! data, in as many rows as they have names.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Text sizes in pixels, as the SVG states them.
const TITLE_PX: f64 = 22.0;
const AXIS_LABEL_PX: f64 = 16.0;
const TICK_PX: f64 = 14.0;
const LEGEND_PX: f64 = 14.0;
/// A legend row's height; past `LEGEND_ROWS` names the legend takes another column, so that a
/// plot of many runs (or runs times flows) stays a reasonable height.
const LEGEND_ROW: u32 = 22;
const LEGEND_ROWS: usize = 30;

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

/// A font that the SVG sizes at `px` pixels: plotters' SVG backend writes a font's size divided
/// by 1.24.
fn font(px: f64) -> FontDesc<'static> {
    ("sans-serif", px * 1.24).into()
}

/// A tick label with the decimals the axis needs and no trailing zeros ("0.5", "20", never
/// "20.0"); on an axis that reaches 10 000 (10 000 000), in thousands "k" (millions "M"), so
/// that the labels stay short.
fn tick(v: f64, axis_max: f64) -> String {
    let (v, max, suffix) = if axis_max >= 1e7 {
        (v / 1e6, axis_max / 1e6, "M")
    } else if axis_max >= 1e4 {
        (v / 1e3, axis_max / 1e3, "k")
    } else {
        (v, axis_max, "")
    };
    // plotters puts ticks at round values some tenth of the axis apart: two more digits than
    // the axis' size shows them exactly.
    let decimals = (-(max / 100.0).log10().floor()).clamp(0.0, 9.0) as usize;
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    if text.trim_start_matches('-') == "0" {
        return "0".to_string();
    }
    format!("{text}{suffix}")
}

/// Units of an axis label and the unit a thousand times larger.
const LARGER_UNITS: [(&str, &str); 5] =
    [("(ns)", "(µs)"), ("(µs)", "(ms)"), ("(ms)", "(s)"), ("(KB)", "(MB)"), ("(MB)", "(GB)")];

/// An axis whose values reach 10 000 of a unit that has a larger one ("(µs)", "(KB)") is shown in
/// that unit instead ("(ms)", "(MB)"): the label and the divisor, or `None` to keep it. ("20k"
/// beside "(KB)" reads as neither.)
fn larger_unit(label: &str, max: f64) -> Option<(String, f64)> {
    let mut label = label.to_string();
    let mut divisor = 1.0;
    while max / divisor >= 1e4 {
        let (small, large) = LARGER_UNITS.iter().find(|(small, _)| label.ends_with(small))?;
        label = format!("{}{large}", &label[..label.len() - small.len()]);
        divisor *= 1e3;
    }
    (divisor > 1.0).then_some((label, divisor))
}

/// `series` with each axis in its larger unit where it has one ([`larger_unit`]), and the new
/// labels; `None` when neither axis changes.
fn in_larger_units(
    x_label: &str,
    y_label: &str,
    x_max: f64,
    y_max: f64,
    series: &[Series],
) -> Option<(String, String, Vec<Series>)> {
    let x = larger_unit(x_label, x_max);
    let y = larger_unit(y_label, y_max);
    if x.is_none() && y.is_none() {
        return None;
    }
    let (xd, yd) = (x.as_ref().map_or(1.0, |u| u.1), y.as_ref().map_or(1.0, |u| u.1));
    let scaled = (series.iter())
        .map(|s| Series { name: s.name.clone(), points: s.points.iter().map(|&(a, b)| (a / xd, b / yd)).collect() })
        .collect();
    Some((x.map_or(x_label.to_string(), |u| u.0), y.map_or(y_label.to_string(), |u| u.0), scaled))
}

/// `title` in lines that fit `width` pixels, broken between words.
fn title_lines(title: &str, width: u32) -> Vec<String> {
    // 0.55 em a character, a little more than sans-serif's average, and a margin each side.
    let fits = ((width.saturating_sub(40)) as f64 / (TITLE_PX * 0.55)) as usize;
    let mut lines: Vec<String> = Vec::new();
    for word in title.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= fits => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The height a title takes beyond its first line, which the drawings' sizes allow for.
fn title_height(title: &str, width: u32) -> u32 {
    title_lines(title, width).len().saturating_sub(1) as u32 * (TITLE_PX * 1.3) as u32
}

/// Draws `title` centred at the top of `root`, in as many lines as it needs, and returns the
/// area below it.
fn titled<'a>(
    root: DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, String> {
    let width = root.dim_in_pixel().0;
    let lines = title_lines(title, width);
    let line_height = (TITLE_PX * 1.3) as i32;
    let style = TextStyle::from(font(TITLE_PX)).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, line) in lines.iter().enumerate() {
        root.draw(&Text::new(line.clone(), (width as i32 / 2, 8 + i as i32 * line_height), style.clone()))
            .map_err(|e| e.to_string())?;
    }
    Ok(root.split_vertically(12 + lines.len() as i32 * line_height).1)
}

/// How a legend shows its series: a line (dashed with `Some((dash, gap))`) or a filled box.
#[derive(Clone, Copy)]
enum Swatch {
    Line(RGBColor, Option<(u32, u32)>),
    Box(RGBColor),
}

/// The n-th line's colour and dash: the palette's colours solid, then dashed, then dotted, so
/// that no two of 36 lines look alike.
fn line_look(n: usize) -> (RGBColor, Option<(u32, u32)>) {
    let dash = [None, Some((10, 6)), Some((2, 5))][(n / PALETTE.len()) % 3];
    (PALETTE[n % PALETTE.len()], dash)
}

/// (width, height) in pixels of a legend of `names`.
fn legend_size(names: &[&str]) -> (u32, u32) {
    let columns = names.len().div_ceil(LEGEND_ROWS).max(1);
    let rows = names.len().div_ceil(columns) as u32;
    let chars = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as f64;
    // 0.6 em a character: wider than sans-serif's average, so that a name never runs over.
    let column = 44 + (chars * LEGEND_PX * 0.6).ceil() as u32;
    (16 + columns as u32 * column, 24 + rows * LEGEND_ROW)
}

/// Draws a legend of `entries` in `area` (sized by `legend_size`), in columns from the top left.
fn legend(area: &DrawingArea<SVGBackend, Shift>, entries: &[(String, Swatch)]) -> Result<(), String> {
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    let (width, _) = legend_size(&names);
    let columns = entries.len().div_ceil(LEGEND_ROWS).max(1);
    let rows = entries.len().div_ceil(columns).max(1);
    let column_width = ((width - 16) / columns as u32) as i32;
    let text = TextStyle::from(font(LEGEND_PX)).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, (name, swatch)) in entries.iter().enumerate() {
        let x = 8 + (k / rows) as i32 * column_width;
        let y = 24 + (k % rows) as i32 * LEGEND_ROW as i32;
        match *swatch {
            Swatch::Line(c, None) => area.draw(&PathElement::new(vec![(x, y), (x + 28, y)], c.stroke_width(2))),
            Swatch::Line(c, Some((dash, gap))) => {
                area.draw(&DashedPathElement::new(vec![(x, y), (x + 28, y)], dash, gap, c.stroke_width(2)))
            }
            Swatch::Box(c) => area.draw(&Rectangle::new([(x + 8, y - 6), (x + 20, y + 6)], c.mix(0.8).filled())),
        }
        .map_err(|e| e.to_string())?;
        area.draw(&Text::new(name.clone(), (x + 36, y), text.clone())).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// One line per series on shared axes, the legend to the right of the plot.
pub fn lines(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<(), String> {
    let max = |axis: fn(&(f64, f64)) -> f64| series.iter().flat_map(|s| s.points.iter().map(axis)).fold(0.0, f64::max);
    let (x_max, y_max) = (max(|p| p.0), max(|p| p.1));
    if let Some((x_label, y_label, scaled)) = in_larger_units(x_label, y_label, x_max, y_max, series) {
        return lines(path, title, &x_label, &y_label, &scaled);
    }
    let x_max = if x_max > 0.0 { x_max } else { 1.0 };
    let y_max = if y_max > 0.0 { y_max * 1.05 } else { 1.0 };
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let (legend_width, legend_height) = legend_size(&names);
    const PLOT: (u32, u32) = (840, 540);
    let height = PLOT.1.max(legend_height + 60);
    let width = PLOT.0 + legend_width;
    let height = height + title_height(title, width);
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = titled(root, title)?;
    let (left, right) = root.split_horizontally(width - legend_width);
    let mut chart = ChartBuilder::on(&left)
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(font(TICK_PX))
        .axis_desc_style(font(AXIS_LABEL_PX))
        .x_label_formatter(&|v| tick(*v, x_max))
        .y_label_formatter(&|v| tick(*v, y_max))
        .draw()
        .map_err(|e| e.to_string())?;
    let mut entries = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let (color, dash) = line_look(i);
        let points = s.points.iter().copied();
        match dash {
            None => chart.draw_series(LineSeries::new(points, color.stroke_width(2))).map(|_| ()),
            Some((d, g)) => chart.draw_series(DashedLineSeries::new(points, d, g, color.stroke_width(2))).map(|_| ()),
        }
        .map_err(|e| e.to_string())?;
        entries.push((s.name.clone(), Swatch::Line(color, dash)));
    }
    legend(&right, &entries)?;
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
/// `colour(row, part)`; with `legend`, the parts' names, right of the bars.
fn horizontal(
    path: &Path,
    title: &str,
    x_label: &str,
    rows: &[(String, Vec<f64>)],
    legend_names: Option<&[&str]>,
    colour: impl Fn(usize, usize) -> RGBColor,
) -> Result<(), String> {
    let n = rows.len().max(1);
    let x_max = rows.iter().map(|r| r.1.iter().sum::<f64>()).fold(0.0f64, f64::max);
    let x_max = if x_max > 0.0 { x_max * 1.05 } else { 1.0 };
    let name_chars = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(4) as f64;
    let (legend_width, legend_height) = legend_names.map_or((0, 0), legend_size);
    const WIDTH: u32 = 900;
    let height = (140 + 28 * n as u32).max(legend_height + 60);
    let width = WIDTH + legend_width;
    let height = height + title_height(title, width);
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = titled(root, title)?;
    let (left, right) = root.split_horizontally(width - legend_width);
    let mut chart = ChartBuilder::on(&left)
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(24 + (name_chars * TICK_PX * 0.6).ceil() as u32)
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
        .x_label_formatter(&|v| tick(*v, x_max))
        .x_desc(x_label)
        .label_style(font(TICK_PX))
        .axis_desc_style(font(AXIS_LABEL_PX))
        .draw()
        .map_err(|e| e.to_string())?;
    let parts = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for p in 0..parts {
        chart
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
    }
    if let Some(names) = legend_names {
        let entries: Vec<(String, Swatch)> =
            names.iter().enumerate().map(|(p, name)| (name.to_string(), Swatch::Box(colour(0, p)))).collect();
        legend(&right, &entries)?;
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

    #[test]
    fn ticks_are_short_and_have_no_trailing_zeros() {
        assert_eq!(tick(20_000.0, 40_000.0), "20k");
        assert_eq!(tick(2_500.0, 40_000.0), "2.5k");
        assert_eq!(tick(0.0, 40_000.0), "0");
        assert_eq!(tick(300.0, 540.0), "300");
        assert_eq!(tick(0.1 + 0.2, 1.05), "0.3");
        assert_eq!(tick(0.25, 1.05), "0.25");
        assert_eq!(tick(12_000_000.0, 30_000_000.0), "12M");
        assert_eq!(tick(0.002, 0.01), "0.002");
    }

    /// The `<text>` elements of an SVG: (x, y, font size, text).
    fn texts(svg: &str) -> Vec<(f64, f64, f64, String)> {
        let attr = |tag: &str, name: &str| -> f64 {
            let from = tag.find(&format!(" {name}=\"")).unwrap_or_else(|| panic!("{name} in {tag}")) + name.len() + 3;
            tag[from..from + tag[from..].find('"').unwrap()].parse().unwrap()
        };
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let (tag, rest) = t.split_once('>').unwrap();
                let text = rest.split_once("</text>").unwrap().0.trim().to_string();
                (attr(tag, "x"), attr(tag, "y"), attr(tag, "font-size"), text)
            })
            .collect()
    }

    /// The largest x of the SVG's lines of more than two points: the right edge of the data (a
    /// legend's sample lines have two).
    fn data_right_edge(svg: &str) -> f64 {
        let lines = svg.split("points=\"").skip(1).map(|p| {
            let xs: Vec<f64> = p[..p.find('"').unwrap()]
                .split_whitespace()
                .map(|xy| xy.split(',').next().unwrap().parse().unwrap())
                .collect();
            if xs.len() > 2 {
                xs.into_iter().fold(0.0, f64::max)
            } else {
                0.0
            }
        });
        lines.fold(0.0, f64::max)
    }

    fn svg_of(name: &str, draw: impl FnOnce(&Path) -> Result<(), String>) -> String {
        let path = std::env::temp_dir().join(format!("aiccsim-plot-{}-{name}.svg", std::process::id()));
        draw(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        svg
    }

    #[test]
    fn a_line_plot_is_readable_and_its_legend_is_clear_of_the_data() {
        // 2 runs x 16 flows, as a throughput plot of an incast would have.
        let series: Vec<Series> = (0..32)
            .map(|i| Series {
                name: format!("run {}: flow {}", i / 16, i % 16),
                points: (0..50).map(|t| (t as f64 * 400.0, (i as f64 + t as f64).sin() * 40.0 + 50.0)).collect(),
            })
            .collect();
        let svg = svg_of("lines", |p| lines(p, "title", "time (µs)", "throughput (Gbit/s)", &series));
        let texts = texts(&svg);
        assert!(texts.iter().all(|t| t.2 >= 12.0), "every text at least 12 px: {texts:?}");
        for (_, _, _, t) in &texts {
            assert!(!t.ends_with(".0"), "tick label {t}");
        }
        // 19 600 µs: the time axis is in ms, ticked "0" to "18", not "10k" beside "(µs)".
        assert!(texts.iter().any(|t| t.3 == "10"), "the time axis in ms: {texts:?}");
        assert!(!texts.iter().any(|t| t.3.ends_with('k')), "{texts:?}");
        let right = data_right_edge(&svg);
        let height: f64 = svg.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        for s in &series {
            let named: Vec<_> = texts.iter().filter(|t| t.3 == s.name).collect();
            assert_eq!(named.len(), 1, "{} once in the legend", s.name);
            assert!(named[0].0 > right, "{} at x {} right of the data (to {right})", s.name, named[0].0);
            assert!(named[0].1 < height, "{} within the image", s.name);
        }
        for label in ["time (ms)", "throughput (Gbit/s)"] {
            assert!(texts.iter().any(|t| t.3 == label && t.2 >= 16.0), "{label} at 16 px");
        }
    }

    #[test]
    fn large_values_move_to_the_larger_unit() {
        assert_eq!(
            larger_unit("queue at switch 0 port 0 (KB)", 21_403.0),
            Some(("queue at switch 0 port 0 (MB)".into(), 1e3))
        );
        assert_eq!(larger_unit("time (µs)", 9_999.0), None);
        assert_eq!(larger_unit("time (µs)", 2.5e7), Some(("time (s)".into(), 1e6)));
        // No larger unit: the ticks say "k".
        assert_eq!(larger_unit("throughput (Gbit/s)", 4e4), None);
    }

    #[test]
    fn a_stacked_bar_legend_is_right_of_the_bars() {
        let rows: Vec<(String, Vec<f64>)> =
            (0..4).map(|i| (format!("scheme {i}"), vec![1000.0, 200.0 * i as f64])).collect();
        let svg =
            svg_of("stacked", |p| stacked_bars(p, "title", "mean iteration time (µs)", &["compute", "exposed"], &rows));
        let texts = texts(&svg);
        let widest_bar = svg
            .split("<rect")
            .skip(2) // the background
            .map(|r| {
                let num = |name: &str| -> f64 {
                    let from = r.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                    r[from..from + r[from..].find('"').unwrap()].parse().unwrap()
                };
                // Bars are 22 px high; the legend's boxes 12.
                if num("height") > 16.0 {
                    num("x") + num("width")
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max);
        for name in ["compute", "exposed"] {
            let t = texts.iter().find(|t| t.3 == name).unwrap();
            assert!(t.0 > widest_bar, "{name} at x {} right of the bars (to {widest_bar})", t.0);
        }
        assert!(texts.iter().all(|t| t.2 >= 12.0 && !t.3.ends_with(".0")), "{texts:?}");
    }
}
