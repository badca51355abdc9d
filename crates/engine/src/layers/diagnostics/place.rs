//! A command's errors placed in the change it ran on: the `Locator` of a
//! `Place` (its files, the go.mod it has, the directory the command `cd`s
//! into, the user's tree for `rascal check`). The only part of this module
//! that reads files, and only through the `Place`.

use super::{go_module_path, leading_dir, Captured, Locator};
use rascal_core::model::verdict::Issue;
use rascal_exec::exec::place::Place;

/// The issues for the errors in `captured`, the output of `command` run at
/// `place`, under the check's `rule`.
pub fn issues(rule: &str, command: &str, place: &Place, captured: &Captured) -> Vec<Issue> {
    let diags = captured.diagnostics();
    if diags.is_empty() {
        return Vec::new();
    }
    let dir = leading_dir(command);
    let go_module = dir
        .iter()
        .cloned()
        .chain(std::iter::once(String::new()))
        .find_map(|d| {
            let file = if d.is_empty() {
                "go.mod".to_string()
            } else {
                format!("{d}/go.mod")
            };
            let text = place.read(&file)?;
            go_module_path(&String::from_utf8_lossy(&text)).map(|m| (m, d))
        });
    let roots = match place {
        Place::InPlace { origin } => {
            let mut r = vec![origin.to_string_lossy().into_owned()];
            if let Ok(c) = origin.canonicalize() {
                r.push(c.to_string_lossy().into_owned());
            }
            r
        }
        _ => Vec::new(),
    };
    let exists = |p: &str| place.read(p).is_some();
    Locator {
        dir,
        go_module,
        roots,
        exists: &exists,
    }
    .issues(rule, &diags)
}
