//! Run ids like `r-20261129-1a2b`: the UTC date, then a random suffix that
//! no run in the store has.

use crate::store::{Store, StoreError};

/// A fresh run id like `r-20261129-1a2b`.
pub fn new_run_id(store: &Store) -> Result<String, StoreError> {
    let now = jiff::Timestamp::now();
    let date = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let mut seed = now.as_nanosecond() as u64 ^ ((std::process::id() as u64) << 32);
    loop {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let id = format!("r-{}-{:04x}", date.strftime("%Y%m%d"), (seed >> 48) as u16);
        if !store.run_exists(&id)? {
            return Ok(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_todays_utc_date() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("rascal.db")).unwrap();
        let today = || {
            jiff::Timestamp::now()
                .to_zoned(jiff::tz::TimeZone::UTC)
                .date()
                .strftime("%Y%m%d")
                .to_string()
        };
        let before = today();
        let id = new_run_id(&store).unwrap();
        let after = today();
        let re = regex::Regex::new(r"^r-(\d{8})-[0-9a-f]{4}$").unwrap();
        let day = &re.captures(&id).expect("r-YYYYMMDD-xxxx")[1];
        // The UTC date when the id was made: the day before or after the
        // call (they differ only when the call straddled midnight).
        assert!(
            day == before || day == after,
            "{id}: not {before} or {after}"
        );
    }
}
