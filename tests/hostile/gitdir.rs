//! The workspace's .git is rascal's, jump-out runs no repository-configured program, and egress judges every tunnel.

#[allow(unused_imports)]
use super::*;
