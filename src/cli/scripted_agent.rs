//! `rascal __scripted-agent FILE` (hidden): plays a scripted agent's
//! scenario in the current directory; how the `scripted` runtime runs.

use super::args::ScriptedAgentArgs;
use super::exit::CliError;
use rascal_exec::agents::scripted::{play, Step};
use std::path::Path;

pub fn scripted_agent(dir: &Path, args: ScriptedAgentArgs) -> Result<i32, CliError> {
    let file = args.file;
    let text = std::fs::read_to_string(&file)
        .map_err(|e| CliError::Usage(format!("reading scenario {}: {e}", file.display())))?;
    let steps: Vec<Step> = serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("scenario {}: {e}", file.display())))?;
    Ok(play(&steps, dir))
}
