//! Run ids like `r-20261129-1a2b`: the UTC date, then a random suffix that
//! no run in the store has.

use crate::store::{Store, StoreError};

/// A fresh run id like `r-20261129-1a2b`.
pub fn new_run_id(store: &Store) -> Result<String, StoreError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let days = now.as_secs() / 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    let mut seed = now.as_nanos() as u64 ^ ((std::process::id() as u64) << 32);
    loop {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let id = format!("r-{y:04}{m:02}{d:02}-{:04x}", (seed >> 48) as u16);
        if !store.run_exists(&id)? {
            return Ok(id);
        }
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}
