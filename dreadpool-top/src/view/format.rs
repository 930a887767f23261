//! Number, duration and bar formatting shared by the panels.

use std::time::Duration;

/// A rate or count in at most 6 columns: `0`, `7.5`, `940`, `12.3k`, `4.1M`.
pub fn rate(value: f64) -> String {
    let v = if value.is_finite() {
        value.max(0.0)
    } else {
        0.0
    };
    if v == 0.0 {
        "0".into()
    } else if v < 10.0 {
        format!("{v:.1}")
    } else if v < 1_000.0 {
        format!("{v:.0}")
    } else if v < 10_000.0 {
        format!("{:.2}k", v / 1e3)
    } else if v < 100_000.0 {
        format!("{:.1}k", v / 1e3)
    } else if v < 1_000_000.0 {
        format!("{:.0}k", v / 1e3)
    } else if v < 10_000_000.0 {
        format!("{:.2}M", v / 1e6)
    } else {
        format!("{:.1}M", v / 1e6)
    }
}

/// A whole count in at most 6 columns.
pub fn count(value: u64) -> String {
    if value < 100_000 {
        value.to_string()
    } else {
        rate(value as f64)
    }
}

/// A latency in at most 6 columns: `850ns`, `12.3µs`, `450µs`, `1.25ms`, `3.2s`.
pub fn latency(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns == 0.0 {
        "-".into()
    } else if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e4 {
        format!("{:.2}µs", ns / 1e3)
    } else if ns < 1e6 {
        format!("{:.0}µs", ns / 1e3)
    } else if ns < 1e7 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns < 1e9 {
        format!("{:.0}ms", ns / 1e6)
    } else {
        format!("{:.1}s", ns / 1e9)
    }
}

/// A ratio as a percentage: `0%` .. `100%`, `-` for none.
pub fn percent(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) if r.is_finite() => format!("{:.0}%", (r * 100.0).clamp(0.0, 100.0)),
        _ => "-".into(),
    }
}

/// An uptime as `h:mm:ss`.
pub fn uptime(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A short age: `12s`, `3m05s`, `2h07m`.
pub fn age(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    }
}

/// A log timestamp as `mm:ss.t` (or `h:mm:ss` past an hour).
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        uptime(d)
    } else {
        format!("{:02}:{:02}.{}", s / 60, s % 60, d.subsec_millis() / 100)
    }
}

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The newest `width` values as a one-line sparkline, scaled to their
/// maximum; padded on the left with spaces when there are fewer values.
pub fn sparkline(values: &[f64], width: usize) -> String {
    let shown = &values[values.len().saturating_sub(width)..];
    let max = shown.iter().copied().fold(0.0f64, f64::max);
    let mut out = " ".repeat(width - shown.len());
    for &v in shown {
        if max <= 0.0 || v <= 0.0 {
            out.push(' ');
        } else {
            let level = ((v / max) * (SPARKS.len() - 1) as f64).round() as usize;
            out.push(SPARKS[level.min(SPARKS.len() - 1)]);
        }
    }
    out
}

const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// A horizontal bar of `value / max` in `width` columns, with eighths.
pub fn bar(value: f64, max: f64, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let fill = if max > 0.0 {
        (value / max).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let eighths = (fill * width as f64 * 8.0).round() as usize;
    let mut out = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        out.push(EIGHTHS[eighths % 8]);
    }
    let len = out.chars().count();
    out.extend(std::iter::repeat_n(' ', width - len));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_fit_six_columns() {
        for (v, s) in [
            (0.0, "0"),
            (7.46, "7.5"),
            (940.2, "940"),
            (1234.0, "1.23k"),
            (12_345.0, "12.3k"),
            (4_100_000.0, "4.10M"),
            (f64::NAN, "0"),
            (-3.0, "0"),
        ] {
            assert_eq!(rate(v), s);
        }
        assert_eq!(count(99_999), "99999");
        assert_eq!(count(123_456), "123k");
        assert_eq!(rate(54_321.0), "54.3k");
    }

    #[test]
    fn latencies() {
        assert_eq!(latency(Duration::ZERO), "-");
        assert_eq!(latency(Duration::from_nanos(850)), "850ns");
        assert_eq!(latency(Duration::from_nanos(12_345)), "12µs");
        assert_eq!(latency(Duration::from_nanos(1_234)), "1.23µs");
        assert_eq!(latency(Duration::from_micros(1_250)), "1.25ms");
        assert_eq!(latency(Duration::from_millis(3_200)), "3.2s");
    }

    #[test]
    fn clocks_percentages_and_uptimes() {
        assert_eq!(clock(Duration::from_millis(72_345)), "01:12.3");
        assert_eq!(uptime(Duration::from_secs(3_723)), "1:02:03");
        assert_eq!(percent(Some(0.234)), "23%");
        assert_eq!(percent(None), "-");
        assert_eq!(percent(Some(1.7)), "100%");
    }

    #[test]
    fn sparklines_and_bars_have_the_width_asked_for() {
        assert_eq!(sparkline(&[0.0, 1.0, 2.0, 4.0], 6), "   ▃▅█");
        assert_eq!(sparkline(&[5.0; 10], 3).chars().count(), 3);
        assert_eq!(sparkline(&[], 2), "  ");
        assert_eq!(bar(5.0, 10.0, 4), "██  ");
        assert_eq!(bar(1.0, 8.0, 1), "▏");
        assert_eq!(bar(8.0, 8.0, 1), "█");
        assert_eq!(bar(0.0, 0.0, 3), "   ");
        assert_eq!(bar(30.0, 10.0, 2), "██");
        assert_eq!(bar(1.0, 16.0, 2).chars().count(), 2);
    }
}
