//! The one content digest (sha256, hex) used by receipts and config records.

use sha2::{Digest, Sha256};

/// sha256 of `bytes`, as lower-case hex.
pub fn digest(bytes: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(bytes.as_ref()))
}
