//! Number formatting for text reports.

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A wall-clock time, milliseconds since the Unix epoch, as `2026-11-23 21:52:08 UTC`.
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// How reports name a thread: `thread "http-nio-8080-exec-3"`, `virtual thread #24` for an
/// unnamed virtual thread, `thread 7` (the dump's serial) when the dump has no name.
pub fn thread_label(name: Option<&str>, is_virtual: bool, tid: Option<u64>, serial: u32) -> String {
    let kind = if is_virtual { "virtual thread" } else { "thread" };
    match (name, tid) {
        (Some(n), _) => format!("{kind} {n:?}"),
        (None, Some(t)) if is_virtual => format!("{kind} #{t}"),
        _ => format!("{kind} {serial}"),
    }
}

/// `1 heap`, `8 heaps`: a count with its noun, in the plural when it is not one.
pub fn count(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// `1536` → `1.5 KiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A duration in milliseconds for people: `850 ms`, `4.2 s`, `3 min 10 s`, `2 h 5 min`.
pub fn human_ms(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..=3_599_999 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_ms(850), "850 ms");
        assert_eq!(human_ms(4_210), "4.2 s");
        assert_eq!(human_ms(190_500), "3 min 10 s");
        assert_eq!(human_ms(7_500_000), "2 h 5 min");
    }

    #[test]
    fn wall_clock_times_are_utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00 UTC");
        // `date -u -d @1795470728` prints Mon Nov 23 21:52:08 UTC 2026.
        assert_eq!(super::utc(1_795_470_728_081), "2026-11-23 21:52:08 UTC");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn threads_are_named_by_name_then_java_id_then_serial() {
        assert_eq!(super::thread_label(Some("main"), false, Some(1), 5), "thread \"main\"");
        assert_eq!(super::thread_label(Some("vt"), true, Some(24), 5), "virtual thread \"vt\"");
        assert_eq!(super::thread_label(None, true, Some(24), 5), "virtual thread #24");
        assert_eq!(super::thread_label(None, false, Some(24), 5), "thread 5");
    }
}
