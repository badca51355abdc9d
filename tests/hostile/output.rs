//! Everything that leaves rascal is inert: terminals, commits, PR bodies, SARIF, notifications, the clipboard.

#[allow(unused_imports)]
use super::*;
