//! The interactive front end: a pure fold of `RunEvent`s plus UI state,
//! driven as `Event → Action → update(state) → draw(state)`. The loop is
//! generic over the ratatui `Backend`, so tests run it on a `TestBackend`.
//! It renders what the engine (`rascal-engine`) reports and hands the
//! user's actions back to it.

pub mod action;
pub mod ansi;
pub mod app;
pub mod commands;
pub mod decision;
pub mod diff;
pub mod draw;
pub mod error;
pub mod finalize;
#[doc(hidden)]
#[cfg(any(test, feature = "fixture"))]
pub mod fixture;
pub mod found;
pub mod hangup;
pub mod highlight;
pub mod home;
pub mod jump;
pub mod keys;
pub mod logbuf;
pub mod logread;
pub mod notifier;
pub mod notify;
pub mod plan;
pub mod search;
pub mod shell;
pub mod terminal;
pub mod test_source;
pub mod theme;
pub mod update;

pub use action::Action;
pub use app::{App, RunMeta, Screen};
pub use decision::{Decision, DecisionKind};
pub use error::Error;
pub use keys::Key;
pub use theme::Theme;
