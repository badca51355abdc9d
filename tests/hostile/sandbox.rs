//! Every sandbox hides host sockets (an allowlist, not a blocklist) and has limits on processes and memory.

#[allow(unused_imports)]
use super::*;
