//! `strftime_now(format)`: the current time formatted as Python's `datetime.now().strftime`
//! formats it (C locale), at the UTC offset the caller gives (the binding passes the process's
//! local offset, as `datetime.now()` reads local time).

use std::time::{SystemTime, UNIX_EPOCH};

const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS: [&str; 12] = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
];

/// A broken-down local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 (Monday) to 6 (Sunday).
    pub weekday: u32,
    /// 1 to 366.
    pub day_of_year: u32,
}

impl DateTime {
    /// The time `seconds` after the Unix epoch (negative: before).
    pub fn from_unix(seconds: i64) -> Self {
        let days = seconds.div_euclid(86_400);
        let rest = seconds.rem_euclid(86_400) as u32;
        // Howard Hinnant's days-to-civil algorithm.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        const BEFORE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
        let day_of_year = BEFORE[month as usize - 1] + day + u32::from(leap && month > 2);
        // 1970-01-01 was a Thursday (3).
        let weekday = (days + 3).rem_euclid(7) as u32;
        Self { year, month, day, hour: rest / 3_600, minute: rest / 60 % 60, second: rest % 60, weekday, day_of_year }
    }

    /// Now, at `utc_offset_seconds` from UTC.
    pub fn now(utc_offset_seconds: i32) -> Self {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
        Self::from_unix(since + i64::from(utc_offset_seconds))
    }

    /// `strftime(format)` in the C locale. A directive it does not know is written as it is.
    pub fn strftime(&self, format: &str) -> String {
        let mut out = String::with_capacity(format.len() + 16);
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let Some(directive) = chars.next() else {
                out.push('%');
                break;
            };
            let hour12 = if self.hour.is_multiple_of(12) { 12 } else { self.hour % 12 };
            match directive {
                'a' => out.push_str(&DAYS[self.weekday as usize][..3]),
                'A' => out.push_str(DAYS[self.weekday as usize]),
                'b' | 'h' => out.push_str(&MONTHS[self.month as usize - 1][..3]),
                'B' => out.push_str(MONTHS[self.month as usize - 1]),
                'd' => out.push_str(&format!("{:02}", self.day)),
                'e' => out.push_str(&format!("{:2}", self.day)),
                'm' => out.push_str(&format!("{:02}", self.month)),
                'y' => out.push_str(&format!("{:02}", self.year.rem_euclid(100))),
                'Y' => out.push_str(&self.year.to_string()),
                'H' => out.push_str(&format!("{:02}", self.hour)),
                'I' => out.push_str(&format!("{hour12:02}")),
                'M' => out.push_str(&format!("{:02}", self.minute)),
                'S' => out.push_str(&format!("{:02}", self.second)),
                'p' => out.push_str(if self.hour < 12 { "AM" } else { "PM" }),
                'j' => out.push_str(&format!("{:03}", self.day_of_year)),
                'u' => out.push_str(&(self.weekday + 1).to_string()),
                'w' => out.push_str(&((self.weekday + 1) % 7).to_string()),
                'F' => out.push_str(&format!("{}-{:02}-{:02}", self.year, self.month, self.day)),
                'D' => out.push_str(&format!("{:02}/{:02}/{:02}", self.month, self.day, self.year.rem_euclid(100))),
                'T' => out.push_str(&format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second)),
                'R' => out.push_str(&format!("{:02}:{:02}", self.hour, self.minute)),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '%' => out.push('%'),
                other => {
                    out.push('%');
                    out.push(other);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_formats() {
        // 2024-07-26 13:05:09 UTC, a Friday, day 208 of a leap year.
        let t = DateTime::from_unix(1_721_999_109);
        assert_eq!(t.strftime("%d %b %Y %H:%M:%S %A %j %I%p %%"), "26 Jul 2024 13:05:09 Friday 208 01PM %");
        assert_eq!(DateTime::from_unix(0).strftime("%Y-%m-%d %a"), "1970-01-01 Thu");
        assert_eq!(DateTime::from_unix(-86_400).strftime("%F %j"), "1969-12-31 365");
        assert_eq!(DateTime::from_unix(951_782_400).strftime("%F %j"), "2000-02-29 060");
    }
}
