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

/// Whether `id` is a run id as [`new_run_id`] makes them
/// (`r-YYYYMMDD-xxxx`, lower-case hex): the only names rascal joins to its
/// state folder. Anything else read from the store is data, never a path.
pub fn is_run_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 15
        && id.starts_with("r-")
        && b[2..10].iter().all(u8::is_ascii_digit)
        && b[10] == b'-'
        && b[11..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rascals_own_ids_are_run_ids() {
        assert!(is_run_id("r-20261129-1a2b"));
        for bad in [
            "",
            "r-1",
            "/home/user",
            "../../x",
            "r-20261129-1a2b/..",
            "r-20261129-1A2B",
            "r-2026112x-1a2b",
            "r-20261129-1a2b\n",
            ".",
        ] {
            assert!(!is_run_id(bad), "{bad:?}");
        }
    }

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
