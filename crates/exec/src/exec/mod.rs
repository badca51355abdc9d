//! Running things: the command runner (process groups, timeouts, output
//! capture) and the launchers an agent runs in.

pub mod cache;
pub mod confine;
pub mod env;
pub mod launch;
pub mod limits;
pub mod notify;
pub mod os;
pub mod place;
pub(crate) mod reaper;
pub(crate) mod results_watch;
pub mod runner;
pub(crate) mod runtime;
pub mod sandbox;
#[doc(hidden)]
pub mod skip;
pub mod steady;

pub use runtime::runtime;
