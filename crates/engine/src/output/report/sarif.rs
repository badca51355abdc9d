//! SARIF 2.1.0: each issue of each candidate's reports as a result with its
//! rule id, level and physical location, so code-scanning tools can ingest
//! guardrail and permission findings. A check that could not run is a result
//! too (`<layer>/<check>/errored`, level error). Through the output policy
//! (`text::inert`): a path is a URI with each segment percent-encoded, so it
//! names the same file (`a#b.txt` is not `a`, a folder named `%2e%2e` is not
//! `..`); messages are plain text with nothing read as a link.

use rascal_core::model::summary::RunSummary;
use rascal_core::model::verdict::{Severity, Status};
use rascal_core::text::inert::{sarif_text, sarif_uri};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Info => "note",
        Severity::Warning => "warning",
        Severity::Error | Severity::Critical => "error",
    }
}

pub fn sarif(s: &RunSummary) -> Value {
    let mut rules: BTreeMap<String, String> = BTreeMap::new();
    let mut results = Vec::new();
    let candidates: Vec<_> = match &s.selected {
        Some(sel) => s.candidates.iter().filter(|c| &c.id == sel).collect(),
        None => s.candidates.iter().collect(),
    };
    for c in candidates {
        for r in &c.reports {
            if r.status == Status::Skipped {
                continue;
            }
            if let Some(e) = &r.errored {
                let id = format!("{}/{}/errored", r.layer, r.check);
                rules.entry(id.clone()).or_insert_with(|| {
                    sarif_text(&format!("{} check `{}` could not run", r.layer, r.check))
                });
                results.push(json!({
                    "ruleId": id,
                    "level": "error",
                    "message": {"text": sarif_text(e)},
                    "properties": {"candidate": c.id, "layer": r.layer, "check": r.check},
                }));
            }
            for i in &r.issues {
                rules
                    .entry(i.rule.clone())
                    .or_insert_with(|| sarif_text(&format!("{} check `{}`", r.layer, r.check)));
                let mut result = json!({
                    "ruleId": i.rule,
                    "level": level(i.effective_severity(r.advisory)),
                    "message": {"text": sarif_text(&i.message)},
                    "properties": {
                        "candidate": c.id, "layer": r.layer, "check": r.check,
                        "severity": i.severity, "confidence": i.confidence,
                    },
                });
                // A path that names no file beneath the root (absolute, `..`)
                // gets no location: it is kept, as text, in the properties.
                match i.path.as_deref().map(|p| (p, sarif_uri(p))) {
                    Some((_, Some(uri))) => {
                        let mut loc =
                            json!({"artifactLocation": {"uri": uri, "uriBaseId": "SRCROOT"}});
                        if let Some(line) = i.line.filter(|l| *l > 0) {
                            loc["region"] = json!({"startLine": line});
                        }
                        result["locations"] = json!([{"physicalLocation": loc}]);
                    }
                    Some((path, None)) => {
                        result["properties"]["path"] = json!(sarif_text(path));
                    }
                    None => {}
                }
                results.push(result);
            }
        }
    }
    let rules: Vec<Value> = rules
        .into_iter()
        .map(|(id, text)| json!({"id": id, "shortDescription": {"text": text}}))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "rascal",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "automationDetails": {"id": format!("rascal/{}", s.run)},
            "properties": {"base": s.base, "selected": s.selected},
            "results": results,
        }]
    })
}
