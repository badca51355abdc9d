//! What a person or a program reads: the headless printer and the reports
//! (Markdown PR body, JSON, SARIF).

pub mod printer;
pub mod report;
pub mod timings;
