//! Bounded memory for any change, no unscanned file passing silently, and a store that is data, never a path or a policy switch.

#[allow(unused_imports)]
use super::*;
