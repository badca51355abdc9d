//! `.rascal/*.yaml`: schemas, strict loading from the base commit, and
//! located validation errors.

pub mod permissions;
