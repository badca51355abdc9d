//! Reports of a run for people and tools: Markdown (the PR body), JSON (the
//! documented `RunSummary` schema) and SARIF 2.1.0 (for code scanning).

pub(crate) mod markdown;
pub(crate) mod sarif;

use rascal_core::model::summary::RunSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Json,
    Sarif,
}

/// The report in `format`, through the output policy (`text::inert`): the
/// Markdown quotes untrusted text as text, the JSON escapes what a terminal
/// would play.
pub fn render(summary: &RunSummary, format: Format) -> String {
    use rascal_core::text::inert::json;
    match format {
        Format::Md => markdown::pr_body(summary, None, None),
        Format::Json => json(&serde_json::to_string_pretty(summary).unwrap_or_default()),
        Format::Sarif => {
            json(&serde_json::to_string_pretty(&sarif::sarif(summary)).unwrap_or_default())
        }
    }
}
