//! The PNG chart of a results file: one bar per (workload, peer), the peer's figure (time,
//! or bytes for the memory rows) divided by agentmem's on a log scale (right of 1 =
//! agentmem faster or smaller). Labels carry the thread count of threaded rows.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::Error;

const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

fn load_font() -> Result<(), Error> {
    let path = std::env::var("AGENTMEM_COMPARE_FONT")
        .ok()
        .into_iter()
        .chain(FONTS.iter().map(|s| (*s).to_owned()))
        .find(|p| Path::new(p).exists())
        .ok_or("no TrueType font found: install fonts-dejavu-core or set AGENTMEM_COMPARE_FONT")?;
    let bytes: &'static [u8] = Box::leak(std::fs::read(path)?.into_boxed_slice());
    register_font("sans-serif", FontStyle::Normal, bytes).map_err(|_| "unreadable font file")?;
    Ok(())
}

pub fn draw(results: &Path, png: &Path) -> Result<(), Error> {
    load_font()?;
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(results)?)?;
    let bars: Vec<(String, f64)> = json["ratios"]
        .as_array()
        .ok_or("results file has no `ratios`")?
        .iter()
        .filter_map(|r| Some((r["label"].as_str()?.to_owned(), r["ratio"].as_f64()?)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    let load = &json["load_average_range"];
    let caption = format!(
        "peer / agentmem (time or bytes; log; >1 = agentmem better) - {}, {} shared cores ({}), load {}-{}",
        json["date"].as_str().unwrap_or("?"),
        json["machine"]["cores"].as_u64().unwrap_or(0),
        json["machine"]["cpu_model"].as_str().unwrap_or("?"),
        load[0].as_f64().unwrap_or(0.0),
        load[1].as_f64().unwrap_or(0.0),
    );
    let height = 120 + 34 * bars.len() as u32;
    let root = BitMapBackend::new(png, (1600, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let max = bars.iter().map(|b| b.1).fold(10.0f64, f64::max) * 8.0;
    let min = bars.iter().map(|b| b.1).fold(0.5f64, f64::min) / 2.0;
    let n = bars.len();
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(640)
        .build_cartesian_2d((min..max).log_scale(), (0..n).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => bars
                .get(n - 1 - *i)
                .map(|b| b.0.clone())
                .unwrap_or_default(),
            _ => String::new(),
        })
        .x_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (label, v))| {
        let y = n - 1 - i;
        // Rows that time different algorithms on the two sides are grey, not a win or loss.
        let color = if label.contains("different work") {
            RGBColor(150, 150, 150)
        } else if *v >= 1.0 {
            RGBColor(46, 125, 50)
        } else {
            RGBColor(198, 40, 40)
        };
        let mut bar = Rectangle::new(
            [
                (min, SegmentValue::Exact(y)),
                (*v, SegmentValue::Exact(y + 1)),
            ],
            color.filled(),
        );
        bar.set_margin(5, 5, 0, 0);
        bar
    }))?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
        let y = n - 1 - i;
        Text::new(
            format!("{v:.2}x"),
            (*v * 1.05, SegmentValue::CenterOf(y)),
            ("sans-serif", 13).into_font(),
        )
    }))?;
    chart.draw_series(LineSeries::new(
        [(1.0, SegmentValue::Exact(0)), (1.0, SegmentValue::Exact(n))],
        BLACK.stroke_width(1),
    ))?;
    root.present()?;
    Ok(())
}
