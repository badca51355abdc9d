//! rascal-scan: the pure scanners of a change — secrets and their rules,
//! forbidden imports, dependency manifests, test integrity and the test
//! runners' ledgers. They read a ChangeSet (or text) and return findings;
//! nothing here runs a command or touches the network. Depends on
//! rascal-core only. See docs/architecture.md.

pub mod deps;
mod error;
pub mod imports;
pub mod ledger;
pub mod secrets;
pub mod test_integrity;

pub use error::Error;
