//! What a person or a program reads: the headless printer and the reports
//! (Markdown PR body, JSON, SARIF).

pub(crate) mod printer;
pub(crate) mod report;
pub(crate) mod timings;

// What callers outside the engine use (the CLI, the TUI, tests).
pub use printer::constraint_line;
pub use printer::state_lines;
pub use printer::Printer;
pub use printer::{decision_line, report_lines};
pub use report::render as render_report;
pub use report::Format;
pub use timings::timings;
pub use timings::timings_lines;
