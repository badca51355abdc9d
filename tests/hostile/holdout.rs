//! Held-out tests are invisible and silent; nothing a candidate's code writes survives into the next check or attempt.

#[allow(unused_imports)]
use super::*;
