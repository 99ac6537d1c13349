//! Time at the edges: records store Unix milliseconds (`i64`), the API and
//! the CLI speak RFC 3339. Keeping one representation inside avoids a codec
//! dependency on a date library's serde format.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    let now = OffsetDateTime::now_utc();
    (now.unix_timestamp_nanos() / 1_000_000) as i64
}

/// Parses an RFC 3339 timestamp into Unix milliseconds.
pub fn parse_rfc3339(text: &str) -> Result<i64, String> {
    let at = OffsetDateTime::parse(text, &Rfc3339).map_err(|e| {
        format!("`{text}` is not an RFC 3339 timestamp ({e}); example: 2027-01-31T23:59:00Z")
    })?;
    Ok((at.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// Formats Unix milliseconds as RFC 3339 UTC with milliseconds.
///
/// Years 0 to 9999 are written here from the civil calendar (a webhook's
/// timestamp, every audit and usage view): the `time` crate's formatter
/// took 4,000 instructions a call, this takes a few hundred. Other
/// instants go through `time`, which writes the epoch for those out of
/// its range; a test holds the two to the same text.
pub fn format_rfc3339(ms: i64) -> String {
    const MS_PER_DAY: i64 = 86_400_000;
    // 0000-01-01 and 10000-01-01 in Unix milliseconds.
    const FIRST: i64 = -62_167_219_200_000;
    const END: i64 = 253_402_300_800_000;
    if !(FIRST..END).contains(&ms) {
        return format_rfc3339_slow(ms);
    }
    let (days, in_day) = (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY));
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (in_day / 3_600_000, in_day / 60_000 % 60);
    let (second, milli) = (in_day / 1_000 % 60, in_day % 1_000);
    let mut out = Vec::with_capacity(24);
    for (value, width, after) in [
        (year, 4, b'-'),
        (month, 2, b'-'),
        (day, 2, b'T'),
        (hour, 2, b':'),
        (minute, 2, b':'),
        (second, 2, b'.'),
        (milli, 3, b'Z'),
    ] {
        for place in (0..width).rev() {
            out.push(b'0' + (value / 10_i64.pow(place) % 10) as u8);
        }
        out.push(after);
    }
    String::from_utf8(out).expect("ASCII digits")
}

/// Year, month and day of the proleptic Gregorian calendar for a count of
/// days since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn format_rfc3339_slow(ms: i64) -> String {
    let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    at.format(&format).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_civil_calendar_writes_what_time_writes() {
        let mut instants = vec![
            0,
            -1,
            1,
            951_782_400_000,     // 2000-02-29
            4_107_542_399_999,   // 2100-02-28T23:59:59.999
            4_107_542_400_000,   // 2100-03-01
            -62_167_219_200_000, // 0000-01-01
            -62_167_219_200_001, // before year 0: the slow path
            253_402_300_799_999, // 9999-12-31T23:59:59.999
            253_402_300_800_000, // 10000-01-01: out of time's range
            i64::MIN,
            i64::MAX,
        ];
        // Every day of four centuries around 2000, at another time of day
        // each, and a spread over the whole range.
        let mut ms = 946_684_800_000 - 200 * 365 * 86_400_000;
        while ms < 946_684_800_000 + 200 * 365 * 86_400_000 {
            instants.push(ms);
            ms += 86_400_000 + 3_723_456;
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            instants.push((x % 315_569_520_000_000) as i64 - 62_167_219_200_000);
        }
        for ms in instants {
            assert_eq!(format_rfc3339(ms), format_rfc3339_slow(ms), "{ms}");
        }
    }
}
