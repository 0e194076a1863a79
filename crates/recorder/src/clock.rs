//! The run's one monotonic clock. Every time in a trace is an offset from its origin, so the
//! intended start, the actual start, each stream event and each GPU sample compare directly.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
    /// Wall-clock time at the origin, for the header's anchor only; never used to measure.
    wall: SystemTime,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            origin: Instant::now(),
            wall: SystemTime::now(),
        }
    }

    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// Milliseconds from the origin to `t` (0 for a `t` before the origin).
    pub fn ms(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1000.0
    }

    pub fn now_ms(&self) -> f64 {
        self.ms(Instant::now())
    }

    /// The instant `ms` after the origin.
    pub fn at(&self, ms: f64) -> Instant {
        self.origin + std::time::Duration::from_secs_f64(ms.max(0.0) / 1000.0)
    }

    /// The origin as UTC RFC 3339 with milliseconds, e.g. `2025-03-01T09:30:00.125Z`.
    pub fn anchor_utc(&self) -> Option<String> {
        let since = self.wall.duration_since(UNIX_EPOCH).ok()?;
        Some(rfc3339(since.as_secs() as i64, since.subsec_millis()))
    }
}

/// `secs` since the Unix epoch + `millis` as UTC RFC 3339, e.g. `2025-03-01T09:30:00.125Z`.
pub fn rfc3339(secs: i64, millis: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(1_740_821_400, 125), "2025-03-01T09:30:00.125Z");
    }

    #[test]
    fn offsets() {
        let c = Clock::start();
        assert_eq!(c.ms(c.origin()), 0.0);
        assert!((c.ms(c.at(12.5)) - 12.5).abs() < 1e-6);
    }
}
